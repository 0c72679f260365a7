#!/usr/bin/env python3
"""How many clusters of a clustered kernel can be resident at once (cuOccupancyMaxActiveClusters), beside the SM
count: a persistent multicast launch sized to half the SMs needs all of its clusters resident together.

    python3 tuning/probes/cluster_occupancy.py CODE_OBJECT.co [GRID]

The kernel is the one the code object is named after (<build>/code/sm90/<kernel>.co); its shared memory and threads
are the generator's (kilngen.wgmma).
"""
import ctypes
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "generator"))
from kilngen import wgmma  # noqa: E402
from kilngen.model import decode  # noqa: E402


class LaunchConfig(ctypes.Structure):
    _fields_ = [("gx", ctypes.c_uint), ("gy", ctypes.c_uint), ("gz", ctypes.c_uint), ("bx", ctypes.c_uint),
                ("by", ctypes.c_uint), ("bz", ctypes.c_uint), ("smem", ctypes.c_uint), ("stream", ctypes.c_void_p),
                ("attrs", ctypes.c_void_p), ("nattrs", ctypes.c_uint)]


def main(argv):
    if len(argv) not in (1, 2):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    path = argv[0]
    kernel = pathlib.Path(path).stem
    sol = decode(kernel)
    name, lds, threads = kernel.encode(), wgmma.lds_bytes(sol), wgmma.threads(sol)
    cu = ctypes.CDLL("libcuda.so.1")

    def ok(rc, what):
        if rc:
            raise SystemExit(f"{what} failed: {rc}")

    ok(cu.cuInit(0), "cuInit")
    dev, ctx, mod, fn = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    ok(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    ok(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    ok(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    sms = ctypes.c_int()
    ok(cu.cuDeviceGetAttribute(ctypes.byref(sms), 16, dev), "cuDeviceGetAttribute")  # MULTIPROCESSOR_COUNT
    data = open(path, "rb").read()
    ok(cu.cuModuleLoadData(ctypes.byref(mod), data), "cuModuleLoadData")
    ok(cu.cuModuleGetFunction(ctypes.byref(fn), mod, name), "cuModuleGetFunction")
    ok(cu.cuFuncSetAttribute(fn, 8, lds), "cuFuncSetAttribute")  # MAX_DYNAMIC_SHARED_SIZE_BYTES
    grid = int(argv[1]) if len(argv) == 2 else sms.value
    cfg = LaunchConfig(grid, 1, 1, threads, 1, 1, lds, None, None, 0)
    n = ctypes.c_int()
    ok(cu.cuOccupancyMaxActiveClusters(ctypes.byref(n), fn, ctypes.byref(cfg)), "cuOccupancyMaxActiveClusters")
    print(f"{kernel[21:60]}...{kernel[-14:]}: {sms.value} SMs, {lds} bytes of shared memory, "
          f"at most {n.value} clusters resident")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
