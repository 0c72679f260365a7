#!/usr/bin/env python3
"""Apply a sass_hints.py rule to every sm_90a cubin in a code object or a library (xz in and out where the name ends
in .xz) and print how many instructions changed in how many kernels.
  python3 tuning/probes/sass_patch.py --mode switch [--share 0.5] IN OUT"""
import argparse
import lzma
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sass_hints as sass  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--mode", default="switch", choices=["switch", "stay"])
p.add_argument("--share", type=float, default=1.0)
p.add_argument("src")
p.add_argument("dst")
a = p.parse_args()
data = lzma.open(a.src).read() if a.src.endswith(".xz") else Path(a.src).read_bytes()
new, changed = sass.patch_embedded(data, sass.Rule(mode=a.mode, share=a.share))
if a.dst.endswith(".xz"):
    with lzma.open(a.dst, "wb", preset=6) as f:
        f.write(new)
else:
    Path(a.dst).write_bytes(new)
print(f"{a.dst}: {sum(changed.values())} instructions changed in {sum(1 for v in changed.values() if v)} of "
      f"{len(changed)} kernels")
