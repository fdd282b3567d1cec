import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from quarry_cli import Quarry  # noqa: E402


@pytest.fixture
def q(tmp_path):
    return Quarry(tmp_path / "data")
