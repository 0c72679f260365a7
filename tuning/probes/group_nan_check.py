"""Every candidate kiln_query offers for weight-only calls with per-group scales at large sizes, run into an output
poisoned with NaN and into one of zeros: relative L2 against the float32 product, NaN and inf counts, unwritten
elements (NaN in the poisoned run where the zero run is finite). Written after tuning/probes/group_picks.py reported
a NaN error for some forced candidate at M >= 512.
    KILN_LIBRARY=<libkiln.so> python3 tuning/probes/group_nan_check.py [--k 12]"""
import argparse
import sys

import torch

sys.path.insert(0, "runtime/python")
import kiln  # noqa: E402

SIZES = [(4096, 4096, 4096), (512, 8192, 8192), (2048, 14336, 4096), (8192, 8192, 8192), (2048, 4096, 14336)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--k", type=int, default=12)
    args = ap.parse_args()
    bad = 0
    for (m, n, k) in SIZES:
        torch.manual_seed(m + n + k)
        w = torch.randn(n, k, device="cuda", dtype=torch.float32) / k ** 0.5
        wq, sg = kiln.quantize_per_token_group(w)
        packed = kiln.prepack_b(wq.t())
        x = torch.randn(m, k, device="cuda", dtype=torch.float16)
        bias = torch.randn(n, device="cuda", dtype=torch.float16)
        for layout, scale in (("contiguous", sg.contiguous()), ("as returned", sg)):
            wd = (wq.float().reshape(n, -1, 128) * scale.float()[:, :, None]).reshape(n, k)
            ref = x.float() @ wd.t() + bias.float()
            cands = kiln.query(kiln.mixed_mm, x, packed, scale_b=scale, bias=bias, k=args.k)
            for a in cands:
                res = {}
                for fill in (float("nan"), 0.0):
                    out = torch.full((m, n), fill, device="cuda", dtype=torch.float16)
                    kiln.mixed_mm(x, packed, scale_b=scale, bias=bias, out=out, algo=a)
                    torch.cuda.synchronize()
                    res[fill == 0.0] = out.float()
                z, p = res[True], res[False]
                err = ((z - ref).norm() / ref.norm()).item()
                nan_z, inf_z = z.isnan().sum().item(), z.isinf().sum().item()
                unwritten = (p.isnan() & z.isfinite()).sum().item()
                ok = err < 1e-2 and nan_z == 0 and inf_z == 0 and unwritten == 0
                bad += not ok
                print(f"{m}x{n}x{k} scale {layout:11s} {'ok ' if ok else 'BAD'} rel_l2 {err:.2e} nan {nan_z} "
                      f"inf {inf_z} unwritten {unwritten} max|out| {z.abs().nan_to_num(0, 0, 0).max().item():.3g} "
                      f"{a.name}", flush=True)
    print("ALL OK" if not bad else f"{bad} BAD")
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
