"""The export-time kernel check against the runtime build's kernel list."""

from __future__ import annotations

import pytest
import torch

import torchlight
from helpers import export
from torchlight import kernel_check


class UsesThree(torch.nn.Module):
    def forward(self, x, y):
        return (x * y + x).reshape(-1)


def test_build_writes_the_kernel_list_the_runtime_registers(runtime, kernels):
    path = kernel_check.find_kernel_list()
    assert path is not None and path.name == "registered_kernels.txt"
    assert kernel_check.load_kernel_list(path) == kernels
    assert {"aten::add.out", "aten::mul.out"} <= kernels


def test_every_missing_operator_is_listed_at_once():
    config = torchlight.ExecutorchBackendConfig(kernel_list=["aten::add.out"])
    with pytest.raises(torchlight.MissingKernelsError) as info:
        export(UsesThree(), (torch.randn(2, 2), torch.randn(2, 2)), config=config)
    assert info.value.operators == ["aten::mul.out", "aten::view_copy.out"]
    message = str(info.value)
    assert "2 operators have no kernel" in message
    assert "aten::view_copy.out (used by forward)" in message


def test_check_can_be_required_or_disabled(tmp_path, monkeypatch):
    inputs = (torch.randn(2, 2), torch.randn(2, 2))
    monkeypatch.setenv("TORCHLIGHT_KERNEL_LIST", str(tmp_path / "kernels.txt"))
    (tmp_path / "kernels.txt").write_text("# comment\naten::mul.out\naten::add.out\n")
    with pytest.raises(torchlight.MissingKernelsError, match="aten::view_copy.out"):
        export(UsesThree(), inputs)
    (tmp_path / "kernels.txt").write_text("aten::mul.out\naten::add.out\naten::view_copy.out\n")
    prog = export(UsesThree(), inputs, config=torchlight.ExecutorchBackendConfig(
        check_kernels=True))
    assert prog.operators() == ["aten::add.out", "aten::mul.out", "aten::view_copy.out"]
    assert prog.missing_kernels(["aten::add.out"]) == ["aten::mul.out", "aten::view_copy.out"]
    # Disabled: exports even though nothing is registered.
    export(UsesThree(), inputs, config=torchlight.ExecutorchBackendConfig(
        check_kernels=False, kernel_list=[]))


def test_required_check_fails_without_a_list(monkeypatch, tmp_path):
    monkeypatch.setattr(kernel_check, "find_kernel_list", lambda: None)
    with pytest.raises(torchlight.ExportError, match="no kernel list found"):
        export(UsesThree(), (torch.randn(2, 2), torch.randn(2, 2)),
               config=torchlight.ExecutorchBackendConfig(check_kernels=True))
    # "auto" skips silently.
    export(UsesThree(), (torch.randn(2, 2), torch.randn(2, 2)))
