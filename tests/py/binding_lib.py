"""The libkiln the binding tests load: $KILN_LIBRARY, else $KILN_BUILD_DIR/libkiln.so, else the first built library
on the binding's search path (build*/libkiln.so); None when there is none (the tests that need one skip)."""
from __future__ import annotations

import os
from pathlib import Path

from kiln import _capi


def find_library() -> str | None:
    """An absolute path (test.sh passes build directories relative to the repository; a pip build runs elsewhere)."""
    env = os.environ.get("KILN_LIBRARY")
    if env:
        return str(Path(env).resolve()) if os.sep in env else env
    build = os.environ.get("KILN_BUILD_DIR")
    if build and (Path(build) / "libkiln.so").is_file():
        return str((Path(build) / "libkiln.so").resolve())
    cands = [c for c in _capi.library_candidates() if os.sep in c and os.path.isfile(c)]
    return str(Path(cands[0]).resolve()) if cands else None


def load_or_skip(needs: str | None = None, what: str = ""):
    """The loaded libkiln for a host test, or pytest.skip: no library built, or (needs) it lacks that attribute of
    kiln.kiln_problem / symbol (a library or binding older than the feature `what` tests)."""
    import pytest

    import kiln

    path = find_library()
    if path is None:
        pytest.skip("no libkiln.so: set KILN_LIBRARY or build one (cmake --build build-ci --target kiln)")
    try:
        lib = _capi.load_library(path)
    except OSError as exc:
        pytest.skip(str(exc))
    if needs and not (hasattr(kiln.kiln_problem(), needs) or hasattr(lib, needs)):
        pytest.skip(f"this library or binding predates {what or needs}")
    return lib
