"""The export-time kernel check: every operator a program calls must have a
kernel in the runtime build.

The runtime build writes the names of its registered kernels, one per line,
to build/<cfg>/registered_kernels.txt (tools/kernel_list). Checking against
it at export turns "operator missing" at load time on a device into an
error at export, listing every missing operator at once.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Set, Union

from torchlight.errors import ExportError
from torchlight.pte import schema

KERNEL_LIST_NAME = "registered_kernels.txt"


class MissingKernelsError(ExportError):
    """Operators the program calls that the runtime has no kernel for."""

    def __init__(self, missing: Dict[str, List[str]], source: str):
        self.operators = sorted(missing)
        self.methods = missing
        lines = [f"{len(missing)} operator{'s' if len(missing) != 1 else ''} "
                 f"ha{'ve' if len(missing) != 1 else 's'} no kernel in the runtime build "
                 f"(kernel list: {source}):"]
        lines += [f"  - {op} (used by {', '.join(missing[op])})" for op in self.operators]
        super().__init__("\n".join(lines))


def repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


def build_dirs() -> List[Path]:
    """Build directories to search, most specific first: $TORCHLIGHT_BUILD_DIR,
    then build/release and build/debug of this checkout."""
    dirs = []
    env = os.environ.get("TORCHLIGHT_BUILD_DIR")
    if env:
        path = Path(env)
        dirs.append(path if path.is_absolute() else repo_root() / path)
    dirs += [repo_root() / "build" / "release", repo_root() / "build" / "debug"]
    return dirs


def find_kernel_list() -> Optional[Path]:
    env = os.environ.get("TORCHLIGHT_KERNEL_LIST")
    if env:
        return Path(env)
    for directory in build_dirs():
        candidate = directory / KERNEL_LIST_NAME
        if candidate.is_file():
            return candidate
    # An installed package carries the list of the build it was made from.
    installed = Path(__file__).resolve().parent / "_data" / KERNEL_LIST_NAME
    return installed if installed.is_file() else None


def load_kernel_list(source: Union[str, os.PathLike, Iterable[str]]) -> Set[str]:
    """Kernel names from a file (one per line, '#' comments) or an iterable."""
    if isinstance(source, (str, os.PathLike)):
        lines = Path(source).read_text().splitlines()
    else:
        lines = list(source)
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


# --- Named targets -----------------------------------------------------------------

TORCHLIGHT_TARGET = "torchlight"
# Upstream ExecuTorch kernel libraries, as lists kept in kernel_targets/: each
# target is the union of its files. The optimized library only overrides
# some operators, so a runtime with it also links the portable library.
UPSTREAM_TARGETS = {
    "executorch-portable": ("executorch-portable.txt", "executorch-prim.txt"),
    "executorch-optimized": ("executorch-optimized-only.txt", "executorch-portable.txt",
                             "executorch-prim.txt"),
    # The portable library plus the quantized one (kernels/quantized), as a
    # runtime running pt2e or LLM-quantized programs without a delegate links.
    "executorch-quantized": ("executorch-quantized-only.txt", "executorch-portable.txt",
                             "executorch-prim.txt"),
}
KERNEL_TARGETS = (TORCHLIGHT_TARGET,) + tuple(UPSTREAM_TARGETS)


def _normalise(name: str) -> str:
    """Programs write a default overload as "" ("ns::op"); lists may say "ns::op.default"."""
    return name[:-len(".default")] if name.endswith(".default") else name


def target_kernels(target: str) -> Optional[Set[str]]:
    """The kernel names of a named target; None for "torchlight", whose list
    is the build's (find_kernel_list). Raises ValueError for an unknown name."""
    if target == TORCHLIGHT_TARGET:
        return None
    if target not in UPSTREAM_TARGETS:
        raise ValueError(f"unknown kernel target {target!r}; known: {', '.join(KERNEL_TARGETS)}")
    directory = Path(__file__).resolve().parent / "kernel_targets"
    names: Set[str] = set()
    for file in UPSTREAM_TARGETS[target]:
        names |= {_normalise(n) for n in load_kernel_list(directory / file)}
    return names


def program_operators(program: schema.Program) -> Dict[str, List[str]]:
    """Operator name ("aten::add.out") -> methods calling it."""
    used: Dict[str, List[str]] = {}
    for plan in program.execution_plan:
        for op in plan.operators:
            used.setdefault(op.qualified_name, [])
            if plan.name not in used[op.qualified_name]:
                used[op.qualified_name].append(plan.name)
    return used


def missing_kernels(program: schema.Program, registered: Set[str]) -> Dict[str, List[str]]:
    names = {_normalise(n) for n in registered}
    return {op: methods for op, methods in program_operators(program).items()
            if _normalise(op) not in names}


def check_kernels(program: schema.Program, mode: Union[bool, str] = "auto",
                  kernel_list=None, target: str = TORCHLIGHT_TARGET) -> Optional[Set[str]]:
    """Raises MissingKernelsError listing every operator of `program` with no
    kernel. `mode` False skips the check; "auto" skips it when no kernel list
    is given or found; True raises ExportError when none is found. An
    upstream `target` supplies its own list (so "auto" always checks) unless
    `kernel_list` is given. Returns the kernel names checked against (None
    when skipped)."""
    if mode is False:
        return None
    if kernel_list is None and target != TORCHLIGHT_TARGET:
        names = target_kernels(target)
        missing = missing_kernels(program, names)
        if missing:
            raise MissingKernelsError(missing, f"target {target}")
        return names
    source = kernel_list if kernel_list is not None else find_kernel_list()
    if source is None:
        if mode == "auto":
            return None
        raise ExportError(f"no kernel list found to check operators against: build the runtime "
                          f"(it writes build/<cfg>/{KERNEL_LIST_NAME}), set "
                          f"TORCHLIGHT_KERNEL_LIST, or pass kernel_list=")
    registered = load_kernel_list(source)
    missing = missing_kernels(program, registered)
    if missing:
        described = str(source) if isinstance(source, (str, os.PathLike)) else "given names"
        raise MissingKernelsError(missing, described)
    return registered
