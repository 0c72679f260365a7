"""The kiln Python package as installed by pip, and the torch-free parts of its PyTorch integration.

pip installs runtime/python into a fresh virtual environment without network access (--no-build-isolation
--no-index, Debian's setuptools), and `import kiln` there, from outside the repository, loads the library the
install recorded (or bundled) and answers a query for sm90 without a GPU. Skips when there is no built library
($KILN_LIBRARY, $KILN_BUILD_DIR, build*/libkiln.so) or when this interpreter has no pip/setuptools/wheel.
"""
from __future__ import annotations

import importlib.util
import inspect
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE_SRC = REPO / "runtime" / "python"
sys.path.insert(0, str(PACKAGE_SRC))

import kiln  # noqa: E402
from kiln import DType, _capi, _library, _ops, _quant, _types  # noqa: E402
from binding_lib import find_library  # noqa: E402

LIBRARY = find_library()

# Run inside the installed package, from a directory outside the tree, in isolated mode (no PYTHONPATH, no cwd).
PROBE = """
import json, kiln
kiln.set_arch("sm90", device_index=-1)
p = kiln.make_problem(kiln.DType.E4M3, kiln.DType.E4M3, kiln.DType.BF16, kiln.Layout.TN, 256, 256, 256)
infos = kiln.query_problem(p, 1, device_index=-1)
print(json.dumps({"file": kiln.__file__, "library": kiln.library_path(), "candidates": kiln._capi.library_candidates(),
                  "arch": kiln.device_arch(-1), "kernel": infos[0].name if infos else None}))
"""


def _tools_missing() -> str | None:
    missing = [m for m in ("pip", "setuptools", "wheel", "venv") if importlib.util.find_spec(m) is None]
    return f"{sys.executable} lacks {', '.join(missing)} (.ci/deps.sh installs them)" if missing else None


def _install(tmp_path: Path, name: str, env_extra: dict) -> Path:
    """A venv (system site packages: Debian's pip and setuptools) with kiln pip-installed from the source tree."""
    venv = tmp_path / name
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], check=True,
                   timeout=60)
    py = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("KILN_LIBRARY", "KILN_BUILD_DIR", "PYTHONPATH")}
    env.update(env_extra)
    out = subprocess.run([str(py), "-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-deps",
                          "--disable-pip-version-check", str(PACKAGE_SRC)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, f"pip install failed:\n{out.stdout}\n{out.stderr}"
    return py


def _probe(py: Path, cwd: Path) -> dict:
    import json
    env = {k: v for k, v in os.environ.items() if k not in ("KILN_LIBRARY", "KILN_BUILD_DIR", "PYTHONPATH")}
    out = subprocess.run([str(py), "-I", "-c", PROBE], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, f"import kiln in the venv failed:\n{out.stdout}\n{out.stderr}"
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def installable():
    why = _tools_missing()
    if why:
        pytest.skip(why)
    if LIBRARY is None:
        pytest.skip("no libkiln.so: set KILN_LIBRARY or build one (cmake --build build-ci --target kiln)")
    return LIBRARY


def _scratch_left() -> list:
    return [p.name for p in PACKAGE_SRC.iterdir() if p.name == "build" or p.name.endswith(".egg-info")]


def test_pip_install_records_the_library(installable, tmp_path):
    py = _install(tmp_path, "venv", {"KILN_LIBRARY": installable})
    got = _probe(py, tmp_path)
    site = str(tmp_path / "venv")
    assert got["file"].startswith(site), f"kiln imported from {got['file']}, not from the venv"
    assert got["library"] == str(Path(installable).absolute())
    assert got["candidates"][0] == got["library"]  # the recorded path first; no repository search when installed
    assert not any(c.startswith(str(REPO / "build")) for c in got["candidates"][1:])
    assert got["arch"] == "sm90" and got["kernel"] and got["kernel"].endswith("_SM90")
    assert not _scratch_left(), f"the install left {_scratch_left()} in {PACKAGE_SRC}"


def test_pip_install_bundles_the_library(installable, tmp_path):
    py = _install(tmp_path, "venv", {"KILN_LIBRARY": installable, "KILN_BUNDLE_LIBRARY": "1"})
    got = _probe(py, tmp_path)
    pkg_dir = os.path.dirname(got["file"])
    assert got["library"] == os.path.join(pkg_dir, "libkiln.so")
    assert got["kernel"] and got["kernel"].endswith("_SM90")


# ---- the search order and the package metadata (no install) ----

def test_candidates_order(monkeypatch, tmp_path):
    info = types.ModuleType("kiln._build_info")
    info.LIBRARY = str(tmp_path / "recorded" / "libkiln.so")
    monkeypatch.setitem(sys.modules, "kiln._build_info", info)
    monkeypatch.delenv("KILN_LIBRARY", raising=False)
    cands = _capi.library_candidates()
    assert cands[0] == info.LIBRARY
    assert cands[1] == str(_capi.REPO_ROOT / "build" / "libkiln.so")  # the in-tree package still searches the tree
    monkeypatch.setenv("KILN_LIBRARY", "/elsewhere/libkiln.so")
    assert _capi.library_candidates() == ["/elsewhere/libkiln.so"]


def test_recorded_library_missing_is_named(monkeypatch, tmp_path):
    """A recorded path that is gone (build directory deleted) is reported by name when nothing else loads."""
    info = types.ModuleType("kiln._build_info")
    info.LIBRARY = str(tmp_path / "gone" / "libkiln.so")
    monkeypatch.setitem(sys.modules, "kiln._build_info", info)
    monkeypatch.setattr(_capi, "in_source_tree", lambda: False)
    monkeypatch.setattr(_capi.ctypes.util, "find_library", lambda name: None)
    monkeypatch.delenv("KILN_LIBRARY", raising=False)
    monkeypatch.setattr(_capi, "_lib", None)
    with pytest.raises(OSError, match=re.escape(f"{info.LIBRARY}: not found")):
        _capi.load_library()


def test_version_matches_cmake():
    cmake = re.search(r"project\(kiln VERSION (\S+)", (REPO / "CMakeLists.txt").read_text()).group(1)
    pyproject = re.search(r'^version = "([^"]+)"', (PACKAGE_SRC / "pyproject.toml").read_text(), re.M).group(1)
    assert pyproject == cmake


# ---- the torch integration's plain-Python parts ----

def _schema_args(schema: str) -> list:
    inner = schema[schema.index("(") + 1:schema.rindex(") ->")]
    return [part.split("=")[0].split()[-1] for part in inner.split(",") if part.strip() != "*"]


@pytest.mark.parametrize("name", sorted(_library.SCHEMAS))
def test_op_schemas_match_their_functions(name):
    """Each operator's schema names the arguments of its CUDA and fake kernels, in order, and (but for the packed
    B's parts) those of the kiln function it calls, with the same keyword-only split."""
    args = _schema_args(_library.SCHEMAS[name])
    impl, fake = _library.KERNELS[name]
    for fn in (impl, fake):
        assert list(inspect.signature(fn).parameters) == args, fn.__name__
    kiln_params = inspect.signature(getattr(_ops, name)).parameters
    packed_parts = {"packed_b", "k", "fp8"} if name == "mixed_mm" else set()
    assert set(args) - packed_parts <= set(kiln_params)
    kw_only = {p for p, v in inspect.signature(impl).parameters.items() if v.kind == v.KEYWORD_ONLY}
    assert kw_only == {p for p in kw_only if kiln_params[p].kind == kiln_params[p].KEYWORD_ONLY}


@pytest.mark.parametrize("name", sorted(_library.SCHEMAS))
def test_op_schemas_have_no_keyword_only_tensors(name):
    """torch.library.custom_op refuses keyword-only tensors (NotImplementedError at definition), and autograd looks
    for tensors that require grad among the positional arguments only."""
    schema = _library.SCHEMAS[name]
    inner = schema[schema.index("(") + 1:schema.rindex(") ->")]
    if "*" in [part.strip() for part in inner.split(",")]:
        kw_only = inner.split("*", 1)[1]
        assert "Tensor" not in kw_only, kw_only


def test_fp8_name_tables():
    assert set(_types.FP8_NAME) == set(_quant.FP8_MANTISSA_BITS) == _types.FP8_DTYPES
    assert _quant.FP8_UNIT_ROUNDOFF[DType.E4M3] == 2 ** -4 and _quant.FP8_UNIT_ROUNDOFF[DType.E5M2] == 2 ** -3
    assert _quant.fp8_dtype("E4M3FN") == DType.E4M3
    with pytest.raises(ValueError, match="not one of"):
        _quant.fp8_dtype("e3m4")


def test_granularity_rules():
    assert _quant.granularity_dim("channel") == 0 and _quant.granularity_dim("tensor") is None
    assert _quant.granularity_dim("group") == "group"
    with pytest.raises(ValueError, match="granularity='row'"):
        _quant.granularity_dim("row")


def test_packed_of_checks_the_parts():
    class Data:  # the least of a tensor packed_of looks at
        shape = (24, 112)

        def dim(self):
            return 2
    packed = _library.packed_of(Data(), 100, "E5M2")
    assert (packed.k, packed.n, packed.dtype, packed.fp8) == (100, 24, DType.E5M2, "e5m2")
    with pytest.raises(ValueError, match="not a prepack of K=200"):
        _library.packed_of(Data(), 200, "e5m2")
    with pytest.raises(ValueError, match="fp8='f16'"):
        _library.packed_of(Data(), 100, "f16")


@pytest.fixture
def no_torch(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)


@pytest.mark.parametrize("call", [lambda: kiln.ops, lambda: kiln.Fp8Linear, lambda: kiln.register_torch_ops(),
                                  lambda: kiln.quantize_fp8(None)], ids=["ops", "Fp8Linear", "register", "quantize"])
def test_torch_parts_need_torch(no_torch, call):
    with pytest.raises(kiln.TorchRequiredError, match="needs PyTorch"):
        call()


def test_unknown_attribute():
    with pytest.raises(AttributeError, match="no attribute 'Fp16Linear'"):
        kiln.Fp16Linear  # noqa: B018
