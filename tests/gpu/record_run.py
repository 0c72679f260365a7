#!/usr/bin/env python3
"""Append a GPU run (the JSON record tests/gpu/conftest.py writes, plus the sanitizer summaries) to docs/gpu-runs.md
and its raw record to docs/gpu-runs.jsonl, so every committed result names its commit and device.

    python3 tests/gpu/record_run.py <out dir of tests/gpu/device_run.sh>
"""
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HEADER = """# GPU runs

Each row is one run of the GPU suite (`tests/gpu`, `bash tests/gpu/device_run.sh` on the GPU machine): the commit it
tested, the device, pass/fail/skip counts, how many of the arch's table kernels ran, and the compute-sanitizer
results (memcheck on the scaled_mm / mixed_mm / gemm / grouped / attention tests, racecheck on the example and
the attention tests). Raw records:
[gpu-runs.jsonl](gpu-runs.jsonl). What racecheck does and does not follow (mbarriers, `bar.arrive` hand-overs) and
the kernels it leaves out: [sanitizers.md](sanitizers.md).

| time (UTC) | commit | device | arch | passed | failed | skipped | kernels run | memcheck | racecheck |
|---|---|---|---|---|---|---|---|---|---|
"""


def sanitizer(log: Path, pattern: str) -> str:
    if not log.is_file():
        return "not run"
    m = re.findall(pattern, log.read_text())
    # several runs may write one log (racecheck: the example, then the attention tests): the worst one counts
    return max(m, key=lambda x: int(x.split()[0])) if m else "no summary"


def main(out_dir: str) -> int:
    out = Path(out_dir)
    records = [json.loads(line) for line in (out / "gpu_run.jsonl").read_text().splitlines() if line.strip()]
    md, raw = REPO / "docs" / "gpu-runs.md", REPO / "docs" / "gpu-runs.jsonl"
    if not md.is_file():
        md.write_text(HEADER)
    memcheck = sanitizer(out / "memcheck.log", r"ERROR SUMMARY: (\d+ errors?)")
    racecheck = sanitizer(out / "racecheck.log", r"RACECHECK SUMMARY: (\d+ hazards? displayed)")
    with md.open("a") as f, raw.open("a") as r:
        for rec in records:
            rec.update(memcheck=memcheck, racecheck=racecheck)
            f.write(f"| {rec['time_utc']} | {rec['commit']} | {rec['device']} | {rec['arch']} | {rec['passed']} | "
                    f"{rec['failed']} | {rec['skipped']} | {rec['kernels_run']}/{rec['kernels_in_table']} | "
                    f"{memcheck} | {racecheck} |\n")
            r.write(json.dumps(rec, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
