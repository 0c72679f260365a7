#!/usr/bin/env python3
"""Unpack an xz file (a packed probe library) where the machine may have no xz tool: python3 unxz.py SRC DST"""
import lzma
import shutil
import sys

with lzma.open(sys.argv[1]) as src, open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst)
