"""docs/amd-kernels.md: every AMD kernel of a build with its resources, occupancy and instruction mix, from the
resources files the build step wrote (buildtools_amd.py). `kiln-gen report-amd --build DIR` writes it."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

from . import attention
from .attention import is_attention_name
from .buildtools_amd import WIDTHS, parse_line
from .model import AMD_INFO, ARCH_INFO, FAMILIES, Arch, Vendor, decode

AMD_ARCHS = [a for a in Arch if ARCH_INFO[a].vendor is Vendor.AMD]


def _cache(build: Path, key: str) -> str:
    path = build / "CMakeCache.txt"
    m = re.search(rf"^{key}:\w+=(.*)$", path.read_text(), re.M) if path.is_file() else None
    return m.group(1) if m else ""


def _compiler(build: Path) -> str:
    cxx = _cache(build, "KILN_AMD_COMPILER")
    if not cxx:
        return "unknown compiler"
    try:
        first = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    except (OSError, IndexError):
        return cxx
    return f"{Path(cxx).name} ({first.strip()})"


def _widths(fields: dict, prefix: str) -> str:
    parts = [f"{w}×{fields[f'{prefix}{w}']}" for w in WIDTHS if fields.get(f"{prefix}{w}", "0") != "0"]
    return " ".join(parts) or "–"


def _row(fields: dict, source: str) -> str:
    sol = decode(fields["function"])
    mma = "mfma" if fields["loop_mfma"] != "0" or fields["mfma"] != "0" else "wmma"
    occ = (f"{fields['occupancy']} ({fields['occupancy_regs']}/{fields['occupancy_lds']}, "
           f"≥{max(1, int(fields['occ_target']))})")
    loop = (f"{fields['loop_' + mma]} · {_widths(fields, 'loop_gload')} · {_widths(fields, 'loop_dsread')} · "
            f"{_widths(fields, 'loop_dswrite')} · {fields['loop_insts']}")
    short = fields["function"][len("Cijk_"):]
    assert sol.name == fields["function"]
    return (f"| `{short}` | {source} | {fields['vgprs']} | {fields['agprs']} | {fields['sgprs']} | {fields['lds']} | "
            f"{fields['scratch']} | {occ} | {fields['ops']} | {loop} | {fields['insts']} |")


def _attn_row(fields: dict, source: str) -> str:
    sol = attention.decode(fields["function"])
    assert sol.name == fields["function"]
    mma = "mfma" if fields["loop_mfma"] != "0" or fields["mfma"] != "0" else "wmma"
    occ = (f"{fields['occupancy']} ({fields['occupancy_regs']}/{fields['occupancy_lds']}, "
           f"≥{max(1, int(fields['occ_target']))})")
    loop = (f"{fields['loop_' + mma]} · {_widths(fields, 'loop_gload')} · {_widths(fields, 'loop_dsread')} · "
            f"{_widths(fields, 'loop_dswrite')} · {fields['loop_insts']}")
    ops = ", ".join(sorted(fields["ops"].split(",")))
    return (f"| `{fields['function']}` | {source} | {sol.head_dim} | {sol.bm}x{sol.bn} | {fields['vgprs']} | "
            f"{fields['agprs']} | {fields['sgprs']} | {fields['lds']} | {fields['scratch']} | {occ} | {ops} | {loop} | "
            f"{fields['insts']} |")


def _attention_sections(attn: dict, root: Path) -> list:
    """The attention kernels of the build, per arch in YAML order (attention.md has their design)."""
    from .attention_yaml import load_tree as load_attention
    order, source = {}, {}
    for af in load_attention(root):
        for sol in af.solutions:
            order.setdefault(sol.name, len(order))
            source.setdefault(sol.name, Path(af.source).name)
    if not attn:
        return []
    out = ["", "## Attention kernels", "",
           "FP8 attention forward ([attention.md](attention.md)): the same columns, with the head dim and the tile "
           "(query rows x keys of a K/V tile); the main loop is the loop over the key tiles.", ""]
    for arch in AMD_ARCHS:
        names = sorted((n for n in attn if attention.decode(n).arch is arch), key=lambda n: (order.get(n, 1 << 30), n))
        if not names:
            continue
        out += [f"### {arch.value} attention", "",
                "| kernel | yaml | D | tile | VGPR | AGPR | SGPR | LDS | scratch | occupancy | matrix ops | main loop | "
                "insts |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        out += [_attn_row(attn[n], source.get(n, "?")) for n in names]
        out.append("")
    return out[:-1]


def amd_report(build: Path, root: Path) -> str:
    from .schema import load_tree
    order, source = {}, {}
    for sf in load_tree(root):
        for logic in sf.logics:
            for sol in logic.solutions:
                order.setdefault(sol.name, len(order))
                source.setdefault(sol.name, Path(sf.source).name)
    lines, attn = {}, {}
    for arch in AMD_ARCHS:
        for log in sorted((build / "code" / arch.value).glob("*.resources.txt")):
            for line in log.read_text().splitlines():
                fields = parse_line(line)
                if is_attention_name(fields["function"]):
                    attn[fields["function"]] = fields
                elif not fields["function"].endswith("_reduce"):
                    lines[fields["function"]] = fields
    built = [a for a in AMD_ARCHS if any(decode(f).arch is a for f in lines)]
    out = [
        "# AMD kernels",
        "",
        "Generated by `generator/kiln-gen report-amd --build <dir>` from a build of "
        f"{', '.join(a.value for a in built)} with {_compiler(build)}; do not edit. There is no AMD GPU here: these numbers are what the code objects say "
        "(docs: `generator/kilngen/buildtools_amd.py`), and `tests/py/test_amd.py` checks them.",
        "",
        "- **VGPR / AGPR / SGPR, scratch**: the compiler's `kernel-resource-usage` remarks, cross-checked against the "
        "code object notes. Scratch is 0 everywhere (the build fails otherwise).",
        "- **LDS**: bytes per workgroup: static LDS plus the dynamic LDS the runtime launches with (the kernel "
        "static_asserts its layout against it).",
        "- **occupancy**: waves per SIMD, the smaller of what registers allow and what LDS allows (in parentheses), "
        "and the YAML's `occ` target it must reach.",
        "- **main loop**: matrix instructions · global loads (bits×count) · LDS reads · LDS writes · instructions, "
        "in the K loop's body (one or two K tiles, by the LDS buffer parity); the last column counts the whole kernel.",
        "",
        "## Summary",
        "",
        "| arch | family | wave | kernels | VGPRs | AGPRs | LDS bytes | occupancy | scratch |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for arch in built:
        rows = [f for name, f in lines.items() if decode(name).arch is arch]
        fam = ARCH_INFO[arch].family

        def span(key, rows=rows):
            values = [int(f[key]) for f in rows]
            return f"{min(values)}–{max(values)}"
        out.append(f"| {arch.value} ({AMD_INFO[arch].matrix_isa}) | {fam.value} | {FAMILIES[fam].wave} | {len(rows)} | "
                   f"{span('vgprs')} | {span('agprs')} | {span('lds')} | {span('occupancy')} | "
                   f"{max(int(f['scratch']) for f in rows)} |")
    for arch in built:
        names = sorted((n for n in lines if decode(n).arch is arch), key=lambda n: (order.get(n, 1 << 30), n))
        out += ["", f"## {arch.value}", "",
                "| kernel | yaml | VGPR | AGPR | SGPR | LDS | scratch | occupancy | matrix op | main loop | insts |",
                "|---|---|---|---|---|---|---|---|---|---|---|"]
        out += [_row(lines[n], source.get(n, "?")) for n in names]
    out += _attention_sections(attn, root)
    return "\n".join(out) + "\n"


def cmd_report_amd(build: str, output: str, root: Path) -> int:
    text = amd_report(Path(build), root)
    Path(output).write_text(text)
    print(f"kiln report-amd: {output}: {text.count(chr(10) + '| `')} kernels")
    return 0
