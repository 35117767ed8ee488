"""Selective build from programs: a runner with only the kernels they call.

    ./torchlight build --ops-from model.pte [--ops-from more.pte] [--ops a,b] [--name NAME]

(or python3 tools/selective/build_selective.py ... inside the toolchain).
Reads the operators each program calls, writes them to
<build-dir>/selective/<name>/ops.txt, reconfigures the build (which turns
each such file into a runner target, tools/selective/CMakeLists.txt) and
builds <build-dir>/selective/<name>/torchlight_run. Only its kernel table and
registration file are compiled; everything else is the build's own objects.
Then it checks that the runner registers every operator and prints its
stripped size next to the same runner with every kernel and the full CLI.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, Iterable, List, Set, Tuple

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))


class SelectiveBuildError(Exception):
    pass


# Delegate backends a runner can link, by the id programs name them with.
KNOWN_BACKENDS = ("XnnpackBackend",)


def program_needs(path: Path) -> Tuple[Set[str], Set[str]]:
    """The operators and the delegate backend ids the program calls."""
    from torchlight.kernel_check import program_operators
    from torchlight.pte.pte_file import read_pte

    try:
        program = read_pte(path.read_bytes()).program
    except (OSError, ValueError) as e:
        raise SelectiveBuildError(f"{path}: {e}") from e
    backends = {d.id for plan in program.execution_plan for d in plan.delegates}
    unknown = sorted(backends - set(KNOWN_BACKENDS))
    if unknown:
        raise SelectiveBuildError(f"{path} delegates to {', '.join(unknown)}, which no runner can link "
                                  f"(known: {', '.join(KNOWN_BACKENDS)})")
    return set(program_operators(program)), backends


def normalise(op: str) -> str:
    # A default overload is written "ns::op" in programs and "ns::op.default" in lists.
    return op[:-len(".default")] if op.endswith(".default") else op


def runner_name(args: argparse.Namespace) -> str:
    if args.name:
        name = args.name
    elif args.ops_from:
        name = "_".join(Path(p).stem for p in args.ops_from)
    else:
        name = "ops"
    name = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return name if re.match(r"[A-Za-z_]", name) else "p_" + name


def stripped_size(binary: Path) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / binary.name
        subprocess.run(["strip", "-o", str(out), str(binary)], check=True)
        return out.stat().st_size


def run(cmd: List[str], quiet: bool) -> None:
    result = subprocess.run(cmd, capture_output=quiet, text=True)
    if result.returncode != 0:
        if quiet:
            sys.stderr.write((result.stdout + result.stderr)[-6000:])
        raise SelectiveBuildError(f"command failed ({result.returncode}): {' '.join(cmd)}")


def build(ops: Set[str], name: str, build_dir: Path, jobs: int, quiet: bool = True,
          backends: Set[str] = frozenset()) -> Dict[str, Path]:
    spec_dir = build_dir / "selective" / name
    spec_dir.mkdir(parents=True, exist_ok=True)
    spec = spec_dir / "ops.txt"
    text = "# Operators for torchlight_selective_%s (tools/selective/build_selective.py).\n" % name
    text += "".join(op + "\n" for op in sorted(ops))
    text += "".join(f"backend:{b}\n" for b in sorted(backends))
    if not spec.is_file() or spec.read_text() != text:
        spec.write_text(text)  # Unchanged content keeps the reconfigure a no-op.
    if not (build_dir / "CMakeCache.txt").is_file():
        raise SelectiveBuildError(f"{build_dir} is not a configured build; run ./torchlight build release first")
    run(["cmake", "-S", str(REPO), "-B", str(build_dir)], quiet)
    run(["cmake", "--build", str(build_dir), "-j", str(jobs), "--target", f"torchlight_selective_{name}",
         "torchlight_run_all_kernels"], quiet)
    runner = spec_dir / "torchlight_run"
    listed = subprocess.run([str(runner), "--list-kernels"], capture_output=True, text=True, check=True)
    registered = {normalise(line.strip()) for line in listed.stdout.splitlines() if line.strip()}
    missing = sorted(op for op in ops if normalise(op) not in registered)
    if missing:
        raise SelectiveBuildError("no kernel in any Torchlight library for: " + ", ".join(missing))
    return {"runner": runner, "all_kernels": build_dir / "bin" / "torchlight_run_all_kernels",
            "cli": build_dir / "bin" / "torchlight"}


def main(argv: Iterable[str] = None) -> int:
    parser = argparse.ArgumentParser(description="Build a runner with only the kernels some programs need.")
    parser.add_argument("--ops-from", action="append", default=[], metavar="PTE",
                        help="a program whose operators the runner must have (repeatable)")
    parser.add_argument("--ops", action="append", default=[], metavar="A,B",
                        help="more operators, comma-separated (e.g. aten::mul.out)")
    parser.add_argument("--name", help="the runner's name (default: the programs' names)")
    parser.add_argument("--build-dir", type=Path, default=REPO / "build" / "release")
    parser.add_argument("--jobs", type=int, default=int(os.environ.get("TORCHLIGHT_JOBS", "2")))
    parser.add_argument("--verbose", action="store_true", help="show the CMake output")
    args = parser.parse_args(list(argv) if argv is not None else None)

    try:
        ops: Set[str] = set()
        backends: Set[str] = set()
        for path in args.ops_from:
            program_ops, program_backends = program_needs(Path(path))
            ops |= program_ops
            backends |= program_backends
        for group in args.ops:
            ops |= {op.strip() for op in group.split(",") if op.strip()}
        if not ops and not backends:
            raise SelectiveBuildError("no operators: pass --ops-from PROGRAM.pte and/or --ops a,b")
        name = runner_name(args)
        build_dir = args.build_dir if args.build_dir.is_absolute() else Path.cwd() / args.build_dir
        binaries = build(ops, name, build_dir, args.jobs, quiet=not args.verbose, backends=backends)
    except SelectiveBuildError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1

    print(f"selective runner '{name}': {len(ops)} operator{'s' if len(ops) != 1 else ''} "
          f"({', '.join(sorted(ops))})" + (f", backends {', '.join(sorted(backends))}" if backends else ""))
    print(f"  {binaries['runner']}")
    print("stripped sizes:")
    rows = [("this runner (selected kernels)", binaries["runner"]),
            ("the same runner, every kernel", binaries["all_kernels"]),
            ("the full torchlight CLI", binaries["cli"])]
    for label, path in rows:
        size = f"{stripped_size(path) / 1024:9.1f} KB" if path.is_file() else "   (not built)"
        print(f"  {label:32} {size}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
