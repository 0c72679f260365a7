"""What the probe merges (narrow_n_merge.py, sab_merge.py) share: a probe timed new kernels beside kernels of a tune
(the references) in its own runs; a new kernel's time enters the tune's results as its probe time times the size's
drift, the geometric mean over the references of tune time / probe time."""
import json
import math
import os
import statistics


def drift(tune: dict, probe: dict, refs) -> float:
    """Geometric mean of tune ms / probe ms over the reference kernels refs ({name: ms} both)."""
    return math.exp(statistics.mean(math.log(tune[n] / probe[n]) for n in refs))


def enter(res: dict, size: str, new) -> None:
    """Puts the (name, ms) pairs of new, in order, into the results' rows of size, in place of any rows of theirs."""
    new = list(new)
    names = {n for n, _ms in new}
    keep = [r for r in res["sizes"][size] if r["name"] not in names]
    for n, ms in new:
        keep.append({"name": n, "rank": len(keep), "ms": round(ms, 6), "pass": True})
    res["sizes"][size] = keep


def write(path: str, res: dict) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        fh.write(json.dumps(res, indent=1, sort_keys=True))
    os.replace(tmp, path)
