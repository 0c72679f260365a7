"""Put generator/ on sys.path so the tests import kilngen as the generator does."""
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "generator"))
