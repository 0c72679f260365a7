"""Build step of the kiln package (metadata: pyproject.toml): record which libkiln.so the installed package loads.

The wheel gets a generated kiln/_build_info.py (never written into the source tree) with LIBRARY, the absolute path
of the library found at build time, in this order:
    $KILN_LIBRARY (must exist), $KILN_BUILD_DIR/libkiln.so (must exist), else the repository's build/libkiln.so,
    then its other build*/libkiln.so, newest first (the order the in-tree package searches).
With KILN_BUNDLE_LIBRARY=1 the library file itself is copied into the package (kiln/libkiln.so) instead, and the
installed package no longer depends on the build directory. With no library found the package still installs,
records none, and looks for one at run time ($KILN_LIBRARY, then the system loader); the build says so on stderr.
At run time $KILN_LIBRARY, when set, still comes first (_capi.library_candidates()).

setuptools' own scratch (build/, kiln.egg-info/) goes to a temporary directory removed at exit, not into the tree.
"""
from __future__ import annotations

import atexit
import os
import pathlib
import shutil
import sys
import tempfile

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
LIBRARY_NAME = "libkiln.so"


def _tree_libraries() -> list:
    if not (REPO / "runtime" / "include" / "kiln" / "kiln.h").is_file():
        return []  # built from a copy of runtime/python alone: no repository to look in
    main = REPO / "build" / LIBRARY_NAME
    others = sorted((p for p in REPO.glob(f"build*/{LIBRARY_NAME}") if p != main and p.is_file()),
                    key=lambda p: (-p.stat().st_mtime, str(p)))
    return [p for p in [main] + others if p.is_file()]


def find_library() -> pathlib.Path | None:
    env = os.environ.get("KILN_LIBRARY")
    if env:
        path = pathlib.Path(env)
        if not path.is_file():
            raise SystemExit(f"kiln setup: KILN_LIBRARY={env} is not a file")
        return path.absolute()
    build = os.environ.get("KILN_BUILD_DIR")
    if build:
        path = pathlib.Path(build) / LIBRARY_NAME
        if not path.is_file():
            raise SystemExit(f"kiln setup: KILN_BUILD_DIR={build} has no {LIBRARY_NAME} (cmake --build {build} "
                             f"--target kiln)")
        return path.absolute()
    found = _tree_libraries()
    return found[0].absolute() if found else None


BUILD_INFO = '''"""Written by runtime/python/setup.py when this package was built; not part of the source tree."""
LIBRARY = {library!r}  # the libkiln.so this package loads (None: bundled here, or none was found at build time)
SOURCE = {source!r}  # the tree it was built from
'''


class build_py_with_library(build_py):
    """build_py, plus kiln/_build_info.py (and kiln/libkiln.so with KILN_BUNDLE_LIBRARY=1) in the build tree."""

    def run(self):
        super().run()
        lib = find_library()
        pkg = pathlib.Path(self.build_lib) / "kiln"
        recorded = str(lib) if lib is not None else None
        if lib is not None and os.environ.get("KILN_BUNDLE_LIBRARY") == "1":
            shutil.copyfile(lib.resolve(), pkg / LIBRARY_NAME)
            recorded = None
        elif lib is None:
            print("kiln setup: no libkiln.so found (set KILN_LIBRARY or KILN_BUILD_DIR, or build build/libkiln.so); "
                  "the package will search at run time", file=sys.stderr)
        (pkg / "_build_info.py").write_text(BUILD_INFO.format(library=recorded, source=str(REPO)))


_scratch = tempfile.mkdtemp(prefix="kiln-setup-")
atexit.register(shutil.rmtree, _scratch, True)

setup(
    cmdclass={"build_py": build_py_with_library},
    options={"build": {"build_base": os.path.join(_scratch, "build")},
             "egg_info": {"egg_base": _scratch}},
)
