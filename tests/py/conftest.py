"""Put generator/ on sys.path so the tests import kilngen as the generator does."""
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "generator"))


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: compiles kernels (a minute or more); -m 'not slow' leaves them out")
