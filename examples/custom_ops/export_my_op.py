"""The custom-operator example, Python side: build the torch extension that
defines torch.ops.my_ops.my_op from the same kernel source the runtime runs
(my_op.cpp, wrapped by my_op_aten.cpp), then export a model calling it with
upstream's API (only the imports name torchlight).

    python3 examples/custom_ops/export_my_op.py OUT.pte [--build-dir build/release]

The runner (custom_ops_runner, built by CMake) then runs OUT.pte.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
# The runtime libraries the kernel source needs, from a CMake build.
RUNTIME_LIBRARIES = ("extension/kernel_util/libtorchlight_kernel_util.a",
                     "runtime/libtorchlight_core.a")


def load_my_ops(build_dir: Path, verbose: bool = False) -> None:
    """Compiles (cached in build_dir/custom_ops_ext) and loads the extension
    registering my_ops::my_op and my_ops::my_op.out, then their fake
    (shape-only) implementations, which export traces with."""
    if hasattr(torch.ops.my_ops, "my_op"):
        return
    from torch.utils import cpp_extension

    libraries = [build_dir / lib for lib in RUNTIME_LIBRARIES]
    missing = [str(lib) for lib in libraries if not lib.is_file()]
    if missing:
        raise FileNotFoundError(f"build the runtime first (./torchlight build release): missing {missing}")
    includes = [str(REPO), str(REPO / "compat" / "include")]
    if os.environ.get("TORCHLIGHT_TORCH_INCLUDE"):  # Torch's C++ headers, when not installed with torch.
        includes.append(os.environ["TORCHLIGHT_TORCH_INCLUDE"])
    ext_dir = build_dir / "custom_ops_ext"
    ext_dir.mkdir(parents=True, exist_ok=True)
    cpp_extension.load(
        name="my_ops_ext",
        sources=[str(HERE / "my_op.cpp"), str(HERE / "my_op_aten.cpp")],
        extra_include_paths=includes,
        extra_ldflags=[str(lib) for lib in libraries],
        build_directory=str(ext_dir),
        is_python_module=False,
        verbose=verbose)

    @torch.library.register_fake("my_ops::my_op")
    def _(a, alpha):
        return torch.empty_like(a, memory_format=torch.contiguous_format)

    @torch.library.register_fake("my_ops::my_op.out")
    def _(a, alpha, *, out):
        return out


class MyOpModel(torch.nn.Module):
    """Aten operators around the custom one."""

    def forward(self, x):
        return torch.ops.my_ops.my_op(x * 2.0, 0.75) + x


def example_input() -> torch.Tensor:
    return torch.linspace(-4.0, 4.0, 24).reshape(2, 3, 4)


def export_my_op(path: Path, build_dir: Path) -> None:
    load_my_ops(build_dir)
    from torchlight.exir import ExecutorchBackendConfig, to_edge
    from torchlight.kernel_check import load_kernel_list

    program = torch.export.export(MyOpModel(), (example_input(),))
    # The runtime this program targets has the build's kernels plus the custom one.
    kernels = load_kernel_list(build_dir / "registered_kernels.txt") | {"my_ops::my_op.out"}
    manager = to_edge(program).to_executorch(ExecutorchBackendConfig(kernel_list=kernels))
    with open(path, "wb") as f:
        manager.write_to_file(f)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=Path)
    parser.add_argument("--build-dir", type=Path, default=REPO / "build" / "release")
    args = parser.parse_args()
    export_my_op(args.output, args.build_dir.resolve())
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
