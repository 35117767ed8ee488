#!/usr/bin/env python3
"""Which operators of torch's core ATen set have a kernel, and which do not.

    ./torchlight exec python3 tools/kernel_coverage.py [--kernels FILE] [--missing] [--check]

Core ATen = the functional overloads torch tags torch.Tag.core. Each maps to
the kernel name an exported program asks for: its out variant by schema
matching (add.Tensor -> aten::add.out), the out variant of its *_copy form
for views (view -> aten::view_copy.out), the out variant without
TensorOptions for factories (full -> aten::full.out), or its own name for
symbolic-size ops. The kernels are the runtime's registered list
(build/release/registered_kernels.txt, one name per line); when that file
does not exist, kernels/portable/portable_ops.def is parsed instead, and the
report says so.

Ends with "N of M core ATen operators have a kernel". With --check, exits
non-zero unless that line's numbers add up (for CTest).
"""

import argparse
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "kernels", "portable"))

import torch  # noqa: E402

from conformance import schema_match  # noqa: E402

DEFAULT_KERNELS = os.path.join(REPO, "build", "release", "registered_kernels.txt")
PORTABLE_OPS_DEF = os.path.join(REPO, "kernels", "portable", "portable_ops.def")


def read_kernels(path):
    """(set of kernel names, description of the source)."""
    if os.path.exists(path):
        with open(path) as f:
            names = {line.strip() for line in f if line.strip() and not line.startswith("#")}
        return names, f"{path} ({len(names)} kernels)"
    with open(PORTABLE_OPS_DEF) as f:
        names = set(re.findall(r'^\s*TL_PORTABLE_OP(?:_PREPARE)?\("([^"]+)"', f.read(), re.MULTILINE))
    return names, (f"{os.path.relpath(PORTABLE_OPS_DEF, REPO)} ({len(names)} kernels; "
                   f"{path} does not exist yet, build the project to list every "
                   "registered kernel)")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernels", default=DEFAULT_KERNELS,
                        help="registered kernel names, one per line (default: %(default)s)")
    parser.add_argument("--missing", action="store_true", help="list only the missing operators")
    parser.add_argument("--check", action="store_true",
                        help="exit non-zero unless the totals are consistent")
    options = parser.parse_args(argv)

    kernels, source = read_kernels(options.kernels)
    rows = []
    for op in schema_match.core_aten_ops():
        name = schema_match.kernel_name(op)
        kernel, how = schema_match.kernel_for_functional(op)
        rows.append((name, kernel, how, kernel in kernels))
    covered = [r for r in rows if r[3]]
    missing = [r for r in rows if not r[3]]

    def show(row):
        name, kernel, how, _ = row
        note = "" if how == "out variant" else f"  ({how})"
        return f"  {name:<40} {kernel}{note}"

    print(f"core ATen operators: torch {torch.__version__}, functional overloads tagged "
          f"torch.Tag.core ({len(rows)})")
    print(f"kernels: {source}")
    if not options.missing:
        print(f"\ncovered ({len(covered)}):")
        for row in covered:
            print(show(row))
    print(f"\nmissing ({len(missing)}):")
    for row in missing:
        print(show(row))
    summary = f"{len(covered)} of {len(rows)} core ATen operators have a kernel"
    print(f"\n{summary}")

    if options.check:
        m = re.fullmatch(r"(\d+) of (\d+) core ATen operators have a kernel", summary)
        n, total = int(m.group(1)), int(m.group(2))
        if not (total == len(rows) > 100 and n + len(missing) == total and 0 < n <= total):
            print(f"kernel_coverage: inconsistent totals: {summary}, {len(missing)} missing",
                  file=sys.stderr)
            return 1
        if not any(r[1] == "aten::add.out" and r[3] for r in rows):
            print("kernel_coverage: aten::add.Tensor should map to the registered aten::add.out",
                  file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
