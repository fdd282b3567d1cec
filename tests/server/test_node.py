"""Runs the Node clients' tests (tests/server/node/*.test.mjs) against quarry: the AWS SDK
for JavaScript v3 (client and DocumentClient), ElectroDB and dynamoose, each file against its own
SigV4-verifying server. The packages are installed with npm into node/node_modules on
first use; the tests are skipped only when npm itself is not installed."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import KEYS, npm_install

NODE_DIR = Path(__file__).parent / "node"
SCRIPTS = sorted(p.name for p in NODE_DIR.glob("*.test.mjs"))


@pytest.fixture(scope="session")
def node_modules():
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("npm is not installed")
    npm_install(NODE_DIR)
    return NODE_DIR / "node_modules"


@pytest.mark.parametrize("script", SCRIPTS)
def test_node(script, node_modules, start, credentials_file):
    srv = start(credentials=credentials_file)
    key, secret = KEYS["ci"]
    env = dict(os.environ, QUARRY_ENDPOINT=srv.url, QUARRY_KEY_ID=key, QUARRY_SECRET=secret,
               AWS_EC2_METADATA_DISABLED="true")
    p = subprocess.run(["node", "--test", "--test-reporter=spec", script], cwd=NODE_DIR, env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, "node --test %s failed:\n%s\n%s\nserver log:\n%s" % (
        script, p.stdout[-6000:], p.stderr[-3000:], srv.log()[-3000:])
