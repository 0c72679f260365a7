"""The f16 arithmetic behind the weight-only kernels' per-group scales (device/kiln_mma_ptx.h, PairScale<kiln_f16>),
checked on the host with exact f16 rounding (struct's half format rounds to nearest even; a product of two f16 values
has at most 22 significant bits, so a double holds it exactly and one rounding gives the f16 product):

- prep's bit split of a float scale s into h (s's sign and mantissa under the exponent of 0.5) and 2^e, e read off
  the exponent field, is frexp's split wherever it is taken (e in [-24, 15]);
- where single(s) holds (e in [-13, 15]), one multiply by f16(s) gives the two multiplies' product (by f16(h), then
  by 2^e) exactly where those round once (their first product and result normals or zero), and a result at least as
  close to w * f16(h) * 2^e where either is subnormal (rounded once instead of twice), for every finite e4m3 and
  e5m2 weight."""
import math
import random
import struct

import pytest


def f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def bits32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def from_bits32(b: int) -> float:
    return struct.unpack("<f", struct.pack("<I", b))[0]


def below(x: float) -> float:
    """The f32 just below a positive f32 x."""
    return from_bits32(bits32(x) - 1)


def f16(x: float) -> float:
    """x rounded to f16 (to nearest even); +-inf past the largest finite value, as the hardware's multiply gives."""
    try:
        return struct.unpack("<e", struct.pack("<e", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def exponent(s: float) -> int:  # PairScale::exponent
    return ((bits32(s) >> 23) & 0xFF) - 126


def prep_bits(s: float) -> tuple:
    """prep's fast path: (h, 2^e) as f32 values, or None where it defers to frexpf."""
    e = exponent(s)
    if not -24 <= e <= 15:
        return None
    return from_bits32((bits32(s) & 0x807FFFFF) | (126 << 23)), from_bits32((e + 127) << 23)


def single(s: float) -> bool:  # PairScale::single
    return -13 <= exponent(s) <= 15


def fp8_values(exp_bits: int, man_bits: int, bias: int, no_inf: bool) -> list:
    """Every finite value of a sign-exponent-mantissa byte format (e4m3fn: no infinities, one NaN code; e5m2: IEEE)."""
    out = []
    for code in range(256):
        sign = -1.0 if code & 0x80 else 1.0
        e = (code >> man_bits) & ((1 << exp_bits) - 1)
        m = code & ((1 << man_bits) - 1)
        if no_inf and e == (1 << exp_bits) - 1 and m == (1 << man_bits) - 1:
            continue  # e4m3fn NaN
        if not no_inf and e == (1 << exp_bits) - 1:
            continue  # e5m2 inf / NaN
        out.append(sign * (m / (1 << man_bits)) * 2.0 ** (1 - bias) if e == 0 else
                   sign * (1 + m / (1 << man_bits)) * 2.0 ** (e - bias))
    return out


E4M3 = fp8_values(4, 3, 7, True)
E5M2 = fp8_values(5, 2, 15, False)


def scales(n: int, lo: float, hi: float, seed: int) -> list:
    rng = random.Random(seed)
    out = [f32(2.0 ** rng.uniform(math.log2(lo), math.log2(hi))) for _ in range(n)]
    return out + [f32(lo), below(f32(hi)), f32(1.0), f32(2.0 ** -14), below(f32(2.0 ** 15))]


def test_fp8_tables():
    assert len(E4M3) == 254 and max(E4M3) == 448.0 and min(v for v in E4M3 if v > 0) == 2.0 ** -9
    assert len(E5M2) == 248 and max(E5M2) == 57344.0 and min(v for v in E5M2 if v > 0) == 2.0 ** -16


def test_prep_bits_is_frexp():
    rng = random.Random(7)
    values = [f32(math.copysign(2.0 ** rng.uniform(-30, 20), rng.choice((-1, 1)))) for _ in range(20000)]
    values += [f32(2.0 ** e) for e in range(-30, 20)] + [below(f32(2.0 ** e)) for e in range(-20, 17)]
    taken = 0
    for s in values:
        split = prep_bits(s)
        h, e = math.frexp(s)
        if split is None:
            assert not -24 <= e <= 15, s
            continue
        taken += 1
        assert split == (h, 2.0 ** e), s
    assert taken > 10000


@pytest.mark.parametrize("weights", [E4M3, E5M2], ids=["e4m3", "e5m2"])
def test_one_multiply_is_the_two(weights):
    normal_min = 2.0 ** -14
    checked = subnormal = 0
    for s in scales(400, 2.0 ** -14, 2.0 ** 15, seed=len(weights)):
        assert single(s), s
        h, p = prep_bits(s)
        hh, pp, one_scale = f16(h), f16(p), f16(s)
        assert pp == p and one_scale == hh * p  # both halves exact in f16, and f16(s) = f16(h) 2^e
        for w in weights:
            first = f16(w * hh)
            two = f16(first * pp)
            one = f16(w * one_scale)
            exact = w * hh * pp
            if math.isinf(two) or math.isinf(one):
                assert one == two, (w, s)
            elif w == 0 or (abs(w * hh) >= normal_min and abs(exact) >= normal_min):
                assert one == two, (w, s)  # the two multiplies round once: the same product
            else:
                subnormal += 1  # a first product or result below f16's normals: rounded twice, one multiply once
                assert abs(one - exact) <= abs(two - exact), (w, s)
            checked += 1
    assert checked > 90000 and subnormal > 0


def test_single_range():
    assert single(f32(2.0 ** -14)) and not single(below(f32(2.0 ** -14)))
    assert single(below(f32(2.0 ** 15))) and not single(f32(2.0 ** 15))
    assert not single(1e-6)  # e5m2 weights' scales: the two-multiply path
    assert single(f32(0.1 / 448))  # an e4m3 weight group's amax of 0.1
