"""PairWiden16<kiln_e5m2> (device/kiln_attn_wgmma.h) packs two keys' e5m2 bytes into V^T's f16 pairs with one byte
permute and a mask a word. Its selectors, read from the header, against the two-step widening (Widen16<kiln_e5m2>,
then the pairs' permutes) on random words: __byte_perm modelled bit for bit."""
import pathlib
import random
import re

HEADER = pathlib.Path(__file__).resolve().parents[2] / "device" / "kiln_attn_wgmma.h"


def byte_perm(x, y, s):
    b = [(x >> (8 * i)) & 0xFF for i in range(4)] + [(y >> (8 * i)) & 0xFF for i in range(4)]
    return sum(b[(s >> (4 * n)) & 7] << (8 * n) for n in range(4))


def two_step(x0, x1):
    a0, a1 = byte_perm(x0, 0, 0x1404), byte_perm(x0, 0, 0x3424)  # Widen16<kiln_e5m2>
    b0, b1 = byte_perm(x1, 0, 0x1404), byte_perm(x1, 0, 0x3424)
    return [byte_perm(a0, b0, 0x5410), byte_perm(a0, b0, 0x7632), byte_perm(a1, b1, 0x5410),
            byte_perm(a1, b1, 0x7632)]


def test_e5m2_pairs_match_the_two_step_widening():
    text = HEADER.read_text()
    body = text[text.index("struct PairWiden16<kiln_e5m2>"):]
    body = body[:body.index("};")]
    sels = [(int(s, 16), int(m, 16)) for s, m in
            re.findall(r"__byte_perm\(x0, x1, (0x[0-9a-f]+)\) & (0x[0-9a-f]+)u", body)]
    assert len(sels) == 4, body
    rng = random.Random(5)
    words = [0, 0xFFFFFFFF, 0x80808080, 0x7F7F7F7F] + [rng.getrandbits(32) for _ in range(20000)]
    for i in range(len(words) - 1):
        x0, x1 = words[i], words[i + 1]
        assert [byte_perm(x0, x1, s) & m for s, m in sels] == two_step(x0, x1), (hex(x0), hex(x1))
