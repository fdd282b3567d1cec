import os
import re
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from quarry_cli import QUARRY, Quarry  # noqa: E402


@pytest.fixture
def q(tmp_path):
    return Quarry(tmp_path / "data")


@pytest.fixture
def served(tmp_path):
    """A boto3 client of a `quarry serve` of its own on a free loopback port; the server
    is stopped (and must exit cleanly) and its data verified when the test ends."""
    boto3 = pytest.importorskip("boto3")
    from botocore.config import Config
    with open(tmp_path / "serve.log", "w") as log:
        proc = subprocess.Popen([QUARRY, "serve", "--listen", "127.0.0.1:0", "--data", str(tmp_path / "data"),
                                 "--log-level", "warn"], stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        url = re.search(r"http://[0-9.:]+", proc.stdout.readline()).group(0)
        yield boto3.client("dynamodb", endpoint_url=url, region_name="us-east-1", aws_access_key_id="k",
                           aws_secret_access_key="s", config=Config(retries={"max_attempts": 0}))
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0
    verify = subprocess.run([QUARRY, "verify", "--data", str(tmp_path / "data")], capture_output=True, text=True,
                            timeout=120)
    assert verify.returncode == 0, verify.stdout
