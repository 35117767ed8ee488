"""No heap allocation after method load: build/release/bin/torchlight_no_heap_check
counts every malloc (any thread) while a loaded method executes twice, on
programs using the optimized matmul kernels (their gemm packs in method
scratch) and the fused KV-cache attention op, on 1 and 2 threads."""
from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest
import torch

import torchlight

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHECK = ROOT / "build/release/bin/torchlight_no_heap_check"
sys.path.insert(0, str(pathlib.Path(__file__).parent / "llm"))
from llm_helpers import ARCHES  # noqa: E402
from torchlight.llm import export_llm  # noqa: E402


class Matmuls(torch.nn.Module):
    """linear (transposed weight: gemm's NT path), mm and bmm (packed
    path), addmm, all with more rows than the matrix-vector path takes."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(64, 48)
        self.weight = torch.nn.Parameter(torch.randn(48, 40))
        self.bias = torch.nn.Parameter(torch.randn(48))

    def forward(self, x, batch):
        y = self.linear(x)                              # [32, 48]
        y = torch.mm(y, self.weight)                    # [32, 40]
        y = torch.addmm(self.bias, y, self.weight.t())  # [32, 48]
        return y, torch.bmm(batch, batch.transpose(1, 2))


def _run_check(tmp_path, program: bytes, threads: int) -> str:
    if not CHECK.exists():
        pytest.fail(f"{CHECK} is missing: build with ./torchlight build release")
    path = tmp_path / "program.pte"
    path.write_bytes(program)
    result = subprocess.run([str(CHECK), str(path), str(threads)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@pytest.mark.parametrize("threads", [1, 2])
def test_optimized_matmuls_allocate_nothing_while_executing(tmp_path, kernels, threads):
    inputs = (torch.randn(32, 64), torch.randn(3, 20, 30))
    program = torchlight.to_edge(torch.export.export(Matmuls().eval(), inputs)).to_executorch()
    operators = program.operators()
    assert {"aten::linear.out", "aten::mm.out", "aten::addmm.out", "aten::bmm.out"} <= set(operators)
    output = _run_check(tmp_path, program.buffer, threads)
    assert f"on {threads} threads: 0" in output


@pytest.mark.parametrize("arch", sorted(ARCHES))
def test_llm_with_fused_attention_allocates_nothing_while_executing(tmp_path, kernels, arch):
    model = ARCHES[arch](use_custom_op=True)
    program = torchlight.to_edge(export_llm(model)).to_executorch()
    # A float32 Llama's attention is the [B, T, H, D] form, whose rotated
    # query and key go to the method's workspace, not the heap.
    fused = {"gpt": "torchlight::sdpa_with_kv_cache.out",
             "llama": "torchlight::rope_sdpa_with_kv_cache.out"}[arch]
    assert fused in program.operators()
    if arch == "llama":  # the block operators (llm/block_ops.py) run too
        assert {"torchlight::add_rms_norm.out", "torchlight::swiglu.out"} <= set(program.operators())
    output = _run_check(tmp_path, program.buffer, 2)
    assert "on 2 threads: 0" in output
