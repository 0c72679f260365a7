#!/usr/bin/env python3
"""Writes the seed inputs of fuzz_api (corpus/), one per case, in the byte layout LLVMFuzzerTestOneInput decodes:
flags, a/b/d types, layout, m, n, k (value encoding: selector byte then payload), field overwrites, 7 pointer
selectors, algo and workspace picks, requested, explain length / 64, then a kiln_prepack_b call; the attn_* seeds
go on with an attention problem (fuzz_attention: flags, types, sizes, head dim, the five flags, descale mode,
overwrites, 8 pointer selectors, softmax scale, algo pick, then the V^T pack's size pick and pointer)."""
import os, struct
D = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'corpus')
def v16(x): return bytes([1, (x >> 8) & 255, x & 255])
def v8(x): return bytes([0, x])
def edge(i): return bytes([6, i])
def seed(name, flags, types, layout, m, n, k, edits=(), ptrs=b'\0'*7, algo=0, ws=0, req=5, elen=40, pre=b'\x05\x25\x29\x00\x00'):
    b = bytes([flags]) + bytes(types) + bytes([layout]) + m + n + k + bytes([len(edits)])
    for f, val in edits: b += bytes([f]) + val
    b += ptrs + bytes([algo, ws, req, elen]) + pre
    open(os.path.join(D, name), 'wb').write(b)
F32, F16, BF16, E4M3, E5M2 = 0, 1, 2, 3, 4
seed('fp8_4096', 0, (E4M3, E4M3, BF16), 0, v16(4096), v16(4096), v16(4096))
seed('wgmma_batched', 0, (E4M3, E4M3, F32), 0, v16(2048), v16(1024), v16(4096), [(8, v8(3))], algo=1)
seed('wgmma_no_tma', 1, (E4M3, E4M3, F32), 0, v16(256), v16(256), v16(256))
seed('mixed_f16', 0, (F16, E4M3, F16), 0, v8(64), v8(64), v8(100))
seed('mixed_wgmma', 0, (F16, E4M3, F32), 0, v16(256), v16(512), v8(104))
seed('gemm_nn_c', 0, (F16, F16, F16), 1, v16(256), v16(256), v16(256), [(16, v8(1))])
seed('k0_zero_fill', 0, (E4M3, E4M3, BF16), 0, v8(100), v8(200), v8(0), [(8, v8(3)), (7, v16(30000))])
seed('k0_bias', 0, (E4M3, E4M3, BF16), 0, v16(1000), v16(3000), v8(0), [(14, v8(1))])
seed('k0_bias_wgmma', 0, (E4M3, E4M3, F32), 0, v16(256), v16(256), v8(0), [(14, v8(1))])
seed('m0', 0, (E4M3, E4M3, BF16), 0, v8(0), v8(64), v8(64))
seed('lda_2_62', 0, (E4M3, E4M3, F32), 0, v8(1), v16(256), v8(128), [(0, edge(9))])
seed('lda_2_62_m2', 0, (E4M3, E4M3, BF16), 0, v8(2), v16(256), v8(128), [(0, edge(9))])
seed('splitk', 0, (E4M3, E4M3, BF16), 0, v8(128), v8(128), v16(16384), ws=0x7f)
seed('no_device', 2, (E4M3, E4M3, BF16), 0, v16(4096), v16(4096), v16(4096))
seed('fp8_nn', 0, (E4M3, E4M3, BF16), 1, v8(64), v8(64), v8(64))
seed('sm89', 4 | 64, (E4M3, E4M3, BF16), 0, v16(512), v16(512), v16(512))
seed('block_wgmma', 0, (E4M3, E4M3, BF16), 0, v16(512), v16(1024), v16(1024), [(22, v8(0))])
seed('block_wgmma_torch', 0, (E4M3, E4M3, BF16), 0, v16(300), v16(1024), v16(1024),
     [(22, v8(0)), (25, v8(1)), (26, v8(8))])
# grouped (field 21: mode v % 5, groups v % 9 - 1): contiguous 5 groups, masked 6, k-grouped 7, block-scaled contiguous
seed('grouped_contiguous', 0, (E4M3, E4M3, BF16), 0, v16(1000), v16(512), v16(1024), [(21, v8(6))])
seed('grouped_masked', 0, (E4M3, E4M3, BF16), 0, v16(200), v16(512), v16(1024), [(21, v8(7))])
seed('grouped_k', 0, (E4M3, E4M3, BF16), 0, v16(256), v16(512), v16(4096), [(21, v8(8))])
seed('grouped_block', 0, (E4M3, E4M3, BF16), 0, v16(1000), v16(512), v16(1024), [(21, v8(6)), (22, v8(0))])
seed('misaligned', 0, (F16, E4M3, F16), 0, v8(64), v8(64), v8(100), [(0, v8(101))], ptrs=b'\2\0\0\0\0\0\0')

def a16(x): return bytes([2, (x >> 8) & 255, x & 255])  # an attention size (mod 20000)
def attn_seed(name, sizes, d, flags5, o=0, edits=(), descale=1, algo=0, vt=0x80):
    pre = b'\x05\x25\x29\x00\x00'
    gemm = bytes([0, E4M3, E4M3, BF16, 0]) + v8(1) + v8(1) + v8(1) + bytes([0]) + b'\0' * 7 + bytes([0, 0, 5, 40]) + pre
    b = bytes([0, 0, o]) + b''.join(a16(x) for x in sizes) + bytes([d]) + bytes(3 if f else 0 for f in flags5)
    b += bytes([descale, len(edits)])
    for f, val in edits: b += bytes([f]) + val
    b += b'\0' * 8 + bytes([1, algo, vt, 0])
    open(os.path.join(D, name), 'wb').write(gemm + b)
# (batch, heads_q, heads_kv, seqlen_q, seqlen_k); d: 0 = 64, 1 = 128, 2 = 256; flags: causal, varlen, lse, fp8_p, v_packed
attn_seed('attn_packed_f16', (3, 8, 2, 1000, 777), 1, (0, 0, 0, 0, 1), o=1)
attn_seed('attn_causal_lse', (2, 16, 4, 4096, 4096), 1, (1, 0, 1, 0, 0))
attn_seed('attn_varlen_packed', (3, 4, 2, 200, 300), 1, (1, 1, 0, 0, 1), o=1,
          edits=[(12, v16(1500)), (13, v16(1700))])

# Inputs the fuzzer once failed on, kept verbatim (base64) so every run replays them.
import base64
REGRESSIONS = {
    # heads_kv 2^27 with a long packed V: the V^T batch-stride check of the wgmma family multiplied past int64
    'regress_vt_stride_overflow':
        'AAMDAAAAAAAAAAAAAAAA/////37///8AAAAAAAAAKQEBJQAAAloAAQABACwAAAAAZmG0eDEAgACEhISEhISEhISEhISEhCqEhISEhA==',
}
for name, b64 in REGRESSIONS.items():
    open(os.path.join(D, name), 'wb').write(base64.b64decode(b64))
