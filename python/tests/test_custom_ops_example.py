"""examples/custom_ops end to end: the torch extension built from the kernel
source (WRAP_TO_ATEN) defines torch.ops.my_ops.my_op; a model calling it is
exported with upstream's API; the C++ runner, which links the same kernel
through EXECUTORCH_LIBRARY, runs the program and matches eager.

Building the extension needs torch's C++ headers (Debian: libtorch-dev), or
$TORCHLIGHT_TORCH_INCLUDE naming a directory that has them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from helpers import REPO

sys.path.insert(0, str(REPO / "examples" / "custom_ops"))
import export_my_op  # noqa: E402

BUILD_DIR = Path(os.environ.get("TORCHLIGHT_BUILD_DIR", REPO / "build" / "release")).resolve()
RUNNER = BUILD_DIR / "bin" / "custom_ops_runner"


def torch_headers_available() -> bool:
    candidates = [Path(torch.__file__).parent / "include"]
    if os.environ.get("TORCHLIGHT_TORCH_INCLUDE"):
        candidates.append(Path(os.environ["TORCHLIGHT_TORCH_INCLUDE"]))
    return any((d / "torch" / "library.h").is_file() for d in candidates)


pytestmark = pytest.mark.skipif(
    not torch_headers_available(),
    reason="torch's C++ headers are not installed (add libtorch-dev to tools/toolchain/packages.txt, "
           "or set TORCHLIGHT_TORCH_INCLUDE)")


def reference(x: torch.Tensor, alpha: float) -> torch.Tensor:
    return alpha * x / (1 + x.abs())


@pytest.fixture(scope="module")
def my_ops():
    export_my_op.load_my_ops(BUILD_DIR)
    return torch.ops.my_ops


def test_eager_runs_the_runtime_kernel(my_ops):
    x = torch.randn(5, 7)
    torch.testing.assert_close(my_ops.my_op(x, 1.25), reference(x, 1.25), rtol=1e-6, atol=1e-6)
    # The out variant writes the caller's tensor and returns it.
    out = torch.empty(5, 7)
    result = my_ops.my_op.out(x, -0.5, out=out)
    assert result.data_ptr() == out.data_ptr()
    torch.testing.assert_close(out, reference(x, -0.5), rtol=1e-6, atol=1e-6)
    # A non-contiguous input is viewed contiguously.
    xt = torch.randn(4, 6).t()
    torch.testing.assert_close(my_ops.my_op(xt, 2.0), reference(xt, 2.0), rtol=1e-6, atol=1e-6)


def test_kernel_failure_raises_with_its_message(my_ops):
    with pytest.raises(RuntimeError, match="float32 tensors only"):
        my_ops.my_op(torch.arange(4), 1.0)


def test_exported_program_runs_in_the_cpp_runner(my_ops, tmp_path):
    pte = tmp_path / "my_op.pte"
    export_my_op.export_my_op(pte, BUILD_DIR)
    from torchlight.kernel_check import program_operators
    from torchlight.pte.pte_file import read_pte
    assert "my_ops::my_op.out" in program_operators(read_pte(pte.read_bytes()).program)

    x = export_my_op.example_input()
    eager = export_my_op.MyOpModel()(x)
    torch.testing.assert_close(eager, reference(2 * x, 0.75) + x, rtol=1e-6, atol=1e-6)
    np.save(tmp_path / "x.npy", x.numpy())
    result = subprocess.run([str(RUNNER), str(pte), str(tmp_path / "x.npy"), str(tmp_path / "y.npy")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    torch.testing.assert_close(torch.from_numpy(np.load(tmp_path / "y.npy")), eager, rtol=1e-6, atol=1e-6)
