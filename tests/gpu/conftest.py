"""GPU suite set-up: skip the `gpu`-marked tests (with the reason) when torch, a CUDA device or libkiln is missing,
and write a run record when $KILN_GPU_LOG names a file.

Run record: one JSON line appended to $KILN_GPU_LOG per session: commit ($KILN_COMMIT or `git rev-parse HEAD`),
device, kiln arch, library path, torch/CUDA versions, passed/failed/skipped/error counts, duration, and which of the
device arch's table kernels the session ran.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import kilntest  # noqa: E402

_counts = {"passed": 0, "failed": 0, "skipped": 0, "errors": 0}
_start = [0.0]


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs torch, a CUDA device and libkiln")
    _start[0] = time.time()


def pytest_collection_modifyitems(config, items):
    gpu_items = [item for item in items if item.get_closest_marker("gpu")]
    if not gpu_items:
        return
    reason = kilntest.gpu_unavailable_reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=f"GPU suite skipped: {reason}")
    for item in gpu_items:
        item.add_marker(skip)


def pytest_runtest_logreport(report):
    if report.when == "call":
        if report.passed:
            _counts["passed"] += 1
        elif report.failed:
            _counts["failed"] += 1
        elif report.skipped:
            _counts["skipped"] += 1
    elif report.failed:  # setup/teardown
        _counts["errors"] += 1
    elif report.skipped and report.when == "setup":
        _counts["skipped"] += 1


def _commit() -> str:
    env = os.environ.get("KILN_COMMIT")
    if env:
        return env
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=kilntest.REPO, capture_output=True, text=True,
                             timeout=10)
        return out.stdout.strip() if out.returncode == 0 else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _device_facts() -> dict:
    facts = {"device": None, "arch": None, "library": None, "torch": None, "cuda": None}
    torch = kilntest.torch
    if torch is not None:
        facts["torch"] = torch.__version__
        facts["cuda"] = torch.version.cuda
        if torch.cuda.is_available():
            facts["device"] = torch.cuda.get_device_name()
    if kilntest.gpu_unavailable_reason() is None:
        facts["arch"] = kilntest.arch()
        facts["library"] = kilntest.kiln.library_path()
    else:
        facts["skip_reason"] = kilntest.gpu_unavailable_reason()
    return facts


def _coverage(facts: dict) -> dict:
    if not facts.get("arch"):
        return {}
    table = kilntest.claimed_names(facts["arch"])
    return {"kernels_in_table": len(table), "kernels_run": len(kilntest.EXERCISED & table),
            "kernels_not_run": sorted(table - kilntest.EXERCISED)}


def pytest_terminal_summary(terminalreporter):
    facts = _device_facts()
    cov = _coverage(facts)
    if cov:
        terminalreporter.write_line(f"kiln: {cov['kernels_run']} of {cov['kernels_in_table']} {facts['arch']} table "
                                    f"kernels ran in this session")


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("KILN_GPU_LOG")
    if not path:
        return
    facts = _device_facts()
    record = {"commit": _commit(), **facts, **_counts, "exitstatus": int(exitstatus),
              "duration_s": round(time.time() - _start[0], 2), **_coverage(facts),
              "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record, sort_keys=True) + "\n")
