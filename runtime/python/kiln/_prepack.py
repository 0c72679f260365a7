"""The prepacked-B layout of kiln_prepack_b, computed three ways: a naive loop (the specification), numpy, torch.

Layout: out[n][kp] bytes, kp = round_up(K, 16). Within each group of 16 k (base g*16):
    out[n][g*16 + 4*q + j] = B(g*16 + P[q][j], n),  P[q] = (2q, 2q+1, 2q+8, 2q+9),  q, j in 0..3
and every k >= K is 0. Each 4-byte word then holds the fp8 pairs a thread of an m16n8k16 mma needs after the
upcast, so the kernel reads B with one 32-bit load per fragment instead of four byte loads.
"""
from __future__ import annotations

PREPACK_GROUP = 16


def _p(q: int) -> tuple:
    return (2 * q, 2 * q + 1, 2 * q + 8, 2 * q + 9)


# PREPACK_PERM[dst offset in a group] = source k offset in the group.
PREPACK_PERM = tuple(_p(q)[j] for q in range(4) for j in range(4))
assert sorted(PREPACK_PERM) == list(range(PREPACK_GROUP))


def packed_k(k: int) -> int:
    """kp: the row length of the packed B in bytes."""
    return (k + PREPACK_GROUP - 1) // PREPACK_GROUP * PREPACK_GROUP


def prepack_reference(b_kn, k: int, n: int) -> list:
    """The specification as loops. b_kn: indexable as b_kn[k][n] (bytes as ints). Returns [n][kp] lists of ints."""
    kp = packed_k(k)
    out = [[0] * kp for _ in range(n)]
    for col in range(n):
        for g in range(kp // PREPACK_GROUP):
            for q in range(4):
                for j in range(4):
                    src_k = g * PREPACK_GROUP + _p(q)[j]
                    if src_k < k:
                        out[col][g * PREPACK_GROUP + 4 * q + j] = b_kn[src_k][col]
    return out


def prepack_numpy(b_kn):
    """numpy uint8 [K, N] (any strides) -> [N, kp] uint8."""
    import numpy as np

    b_kn = np.asarray(b_kn)
    if b_kn.ndim != 2 or b_kn.dtype.itemsize != 1:
        raise ValueError(f"prepack_numpy: want a 2-D array of 1-byte elements, got {b_kn.dtype} {b_kn.shape}")
    k, n = b_kn.shape
    kp = packed_k(k)
    padded = np.zeros((n, kp), dtype=np.uint8)
    padded[:, :k] = b_kn.view(np.uint8).T
    perm = np.asarray(PREPACK_PERM, dtype=np.intp)
    return padded.reshape(n, kp // PREPACK_GROUP, PREPACK_GROUP)[:, :, perm].reshape(n, kp)


_perm_cache = {}


def _perm_on(torch, dev):
    """PREPACK_PERM as a long tensor on `dev`, made once per device. Made by device arithmetic, not copied from the
    host, so that a prepack inside a CUDA-graph capture launches no host-to-device copy (which capture forbids); a perm
    made while capturing is not cached either, since its values only exist once the graph replays."""
    perm = _perm_cache.get(dev)
    if perm is not None:
        return perm
    i = torch.arange(PREPACK_GROUP, dtype=torch.long, device=dev)
    perm = 2 * (i // 4) + i % 2 + 8 * ((i // 2) % 2)  # dst 4q + j <- src 2q + (j & 1) + 8 (j >> 1): _p(q)[j]
    if dev.type != "cuda" or not torch.cuda.is_current_stream_capturing():
        _perm_cache[dev] = perm
    return perm


def prepack_torch(b_kn_u8):
    """torch uint8 [K, N] view (any strides, any device) -> new contiguous [N, kp] uint8 on the same device.

    Three device ops (zero fill, strided copy, gather along the last dim); the bytes never visit the host.
    """
    import torch

    k, n = b_kn_u8.shape
    kp = packed_k(k)
    dev = b_kn_u8.device
    perm = _perm_on(torch, dev)
    padded = torch.zeros((n, kp), dtype=torch.uint8, device=dev)
    padded[:, :k] = b_kn_u8.t()
    grouped = padded.view(n, kp // PREPACK_GROUP, PREPACK_GROUP)
    return torch.index_select(grouped, 2, perm).reshape(n, kp)
