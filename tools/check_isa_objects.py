"""Fails if an object built for one instruction set (-mavx2, -mavx512*, -mamx*,
...) defines code the linker may share with the rest of the program.

Per-ISA files (linear_8da4w_avx512vnni.cpp, sdpa_attend_avx2.cpp, ...) are
only called after a run-time CPU check. An inline function or template they
instantiate out of line is a weak symbol; the linker keeps ONE copy of it for
every caller, and if it keeps the AVX-512 file's copy, a generic caller on an
AVX2-only machine runs AVX-512 instructions (SIGILL). Such code must have
internal linkage (static, or an unnamed namespace) in those files.

    python3 tools/check_isa_objects.py BUILD_DIR

Reads BUILD_DIR/compile_commands.json, picks the commands with an ISA flag,
and lists the weak symbols (nm types W, V, u) each of their objects defines.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

# Flags that let the compiler use instructions a baseline x86-64 CPU lacks.
ISA_FLAG_PREFIXES = ("-mavx", "-mamx", "-mfma", "-mf16c", "-mbmi", "-march=", "-mfp16")
WEAK_SYMBOL_TYPES = {"W", "V", "u"}


def isa_objects(build_dir: Path) -> list[tuple[Path, list[str]]]:
    found = []
    for entry in json.loads((build_dir / "compile_commands.json").read_text()):
        args = entry.get("arguments") or shlex.split(entry["command"])
        flags = [a for a in args if a.startswith(ISA_FLAG_PREFIXES) and a != "-march=x86-64"]
        if not flags or "-o" not in args:
            continue
        obj = Path(entry["directory"]) / args[args.index("-o") + 1]
        found.append((obj, flags))
    return found


def weak_symbols(obj: Path) -> list[str]:
    out = subprocess.run(["nm", "-C", "--defined-only", str(obj)], capture_output=True,
                         text=True, check=True).stdout
    symbols = []
    for line in out.splitlines():
        parts = line.split(maxsplit=2)
        if len(parts) == 3 and parts[1] in WEAK_SYMBOL_TYPES:
            symbols.append(parts[2])
    return symbols


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    build_dir = Path(sys.argv[1]).resolve()
    objects = isa_objects(build_dir)
    if not objects:
        print(f"check_isa_objects: no objects with ISA flags in {build_dir}/compile_commands.json")
        return 1
    problems = 0
    checked = 0
    for obj, flags in objects:
        if not obj.exists():
            continue  # a target not built in this configuration
        checked += 1
        for symbol in weak_symbols(obj):
            problems += 1
            print(f"{obj.relative_to(build_dir)} ({' '.join(flags)}) defines shared weak symbol: {symbol}")
    if problems:
        print(f"check_isa_objects: {problems} weak symbol(s) in per-ISA objects; give them "
              "internal linkage (static or an unnamed namespace)")
        return 1
    print(f"check_isa_objects: {checked} per-ISA objects define no weak symbols")
    return 0


if __name__ == "__main__":
    sys.exit(main())
