"""Fixtures for the `quarry model` tests (helpers live in modeltest.py)."""
import pytest

from modeltest import check_model


@pytest.fixture
def check(tmp_path):
    """check(model_dict) -> (exit status, report dict) via `quarry model check --json`."""
    return lambda model: check_model(tmp_path, model)
