"""Mutable buffers (a registered buffer updated in place, e.g. a KV cache):
planned with an initial value, updated in their own slot, state kept
between runs."""

from __future__ import annotations

import pytest
import torch

import torchlight
from helpers import export
from torchlight.pte import schema


class Accumulator(torch.nn.Module):
    """A running sum, like a cache that grows with every call."""

    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.arange(6, dtype=torch.float32).reshape(2, 3))

    def forward(self, x):
        self.total.add_(x)
        return self.total * 2


class Counter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(1, dtype=torch.int64))

    def forward(self, x):
        self.count.add_(1)
        return x * self.count


class ReadAfterUpdate(torch.nn.Module):
    """The old value is read after the new one is computed, so the update
    cannot run in place: it becomes a copy at the end."""

    def __init__(self):
        super().__init__()
        self.register_buffer("state", torch.ones(3))

    def forward(self, x):
        new = self.state * x
        out = self.state + x
        self.state.copy_(new)
        return out


def _buffer_values(plan):
    return [(i, v.val) for i, v in enumerate(plan.values)
            if isinstance(v.val, schema.Tensor) and v.val.extra_tensor_info is not None]


def test_buffer_is_planned_with_an_initial_value():
    prog = export(Accumulator(), (torch.randn(2, 3),))
    program = prog.program
    plan = program.execution_plan[0]
    ((index, tensor),) = _buffer_values(plan)
    assert tensor.extra_tensor_info.fully_qualified_name == "total"
    assert tensor.allocation_info is not None and tensor.data_buffer_idx == 1
    (segments,) = program.mutable_data_segments
    assert segments.offsets == [0, 0]
    f = torchlight.pte.pte_file.read_pte(prog.buffer)
    initial = f.mutable_bytes(1, 24)
    assert torch.equal(torch.frombuffer(bytearray(initial), dtype=torch.float32),
                       torch.arange(6, dtype=torch.float32))
    # The add writes straight into the buffer's slot: no copy instruction.
    assert prog.operators() == ["aten::add.out", "aten::mul.out"]
    add = plan.chains[0].instructions[0].instr_args
    out = plan.values[add.args[-1]].val
    assert out.allocation_info == tensor.allocation_info
    assert out.data_buffer_idx == 0, "only the buffer itself carries the initial value"


@pytest.mark.parametrize("model_cls,make_input", [
    (Accumulator, lambda: torch.randn(2, 3)),
    (Counter, lambda: torch.randint(-5, 5, (4,))),
])
def test_state_persists_across_runs(runtime, model_cls, make_input):
    exported_model = model_cls()
    prog = export(exported_model, (make_input(),))
    reference = model_cls()  # Fresh state: export traced without running forward.
    module = runtime.load(prog.buffer)
    for _ in range(4):
        x = make_input()
        with torch.no_grad():
            expected = reference(x)
        (actual,) = module.run("forward", [x])
        assert torch.equal(actual, expected)
    # A new load starts again from the initial value.
    again = runtime.load(prog.buffer)
    x = make_input()
    assert torch.equal(again.run("forward", [x])[0], model_cls()(x))


def test_update_read_after_write_uses_a_copy_into_the_slot(runtime, kernels):
    config = torchlight.ExecutorchBackendConfig(check_kernels=False)
    prog = export(ReadAfterUpdate(), (torch.randn(3),), config=config)
    plan = prog.program.execution_plan[0]
    ((_, buffer),) = _buffer_values(plan)
    last = plan.chains[0].instructions[-1].instr_args
    assert plan.operators[last.op_index].qualified_name == "aten::copy.out"
    # copy.out(self=buffer, src=new, non_blocking, out=buffer slot, return)
    assert plan.values[last.args[0]].val == buffer
    assert plan.values[last.args[-1]].val.allocation_info == buffer.allocation_info
    missing = prog.missing_kernels(kernels)
    if missing:
        pytest.skip(f"the runtime has no kernel yet for {', '.join(missing)} (issue #4)")
    module = runtime.load(prog.buffer)
    reference = ReadAfterUpdate()
    for _ in range(3):
        x = torch.randn(3)
        assert torch.equal(module.run("forward", [x])[0], reference(x))
