"""Memory planning: reuse, safety, alignment, reported sizes, and the
options that leave inputs or outputs to the caller."""

from __future__ import annotations

import itertools

import pytest
import torch

import torchlight
from helpers import export
from torchlight import ops
from torchlight.passes.memory_planning import ALLOCATION
from torchlight.pte import schema


class Chain(torch.nn.Module):
    """Six same-sized steps: only two or three values are ever live at once."""

    def forward(self, x):
        for i in range(6):
            x = x * 1.5 + float(i)
        return x


class Diamond(torch.nn.Module):
    """Values of different sizes with overlapping lifetimes, via broadcasting."""

    def forward(self, x, y, z):
        a = x * y            # [8, 16]
        b = a + z            # [8, 16]
        c = y * 2.0          # [1, 16]
        d = b * c + a        # [8, 16]
        e = c + z            # [8, 16] (z broadcasts)
        return d * e, c


def _lifetimes(method):
    """(first, last) node index of each planned storage owner, recomputed
    here independently of the planner."""
    nodes = list(method.graph.nodes)
    index = {n: i for i, n in enumerate(nodes)}
    owner = {}
    for n in nodes:
        if n.op == "placeholder" or ops.is_alloc(n):
            owner[n] = n
        elif "tl_out_allocs" in n.meta and len(n.meta["tl_out_allocs"]) == 1:
            owner[n] = n.meta["tl_out_allocs"][0]
    spans = {}
    for n in nodes:
        if n in owner and ALLOCATION in owner[n].meta:
            o = owner[n]
            spans.setdefault(o, [index[n], index[n]])
        for used in n.all_input_nodes:
            o = owner.get(used)
            if o is not None and o in spans:
                spans[o][1] = max(spans[o][1], len(nodes) if n.op == "output" else index[n])
    return spans


def _check_no_live_overlap(method):
    spans = _lifetimes(method)
    assert spans
    for a, b in itertools.combinations(spans, 2):
        (sa, ea), (sb, eb) = spans[a], spans[b]
        if sa <= eb and sb <= ea:  # Both live at some node.
            ma, oa = a.meta[ALLOCATION]
            mb, ob = b.meta[ALLOCATION]
            na = a.meta["val"].numel() * a.meta["val"].element_size()
            nb = b.meta["val"].numel() * b.meta["val"].element_size()
            assert ma != mb or oa + na <= ob or ob + nb <= oa, \
                f"{a.name} and {b.name} are live together but share bytes"


@pytest.mark.parametrize("algorithm", ["greedy", "naive"])
def test_live_tensors_never_share_bytes(algorithm):
    config = torchlight.ExecutorchBackendConfig(memory_planning=algorithm)
    for model, inputs in ((Chain(), (torch.randn(64),)),
                          (Diamond(), (torch.randn(8, 16), torch.randn(1, 16),
                                       torch.randn(8, 1)))):
        prog = export(model, inputs, config=config)
        _check_no_live_overlap(prog.method_graph())


def test_greedy_reuses_memory_and_naive_does_not():
    greedy = export(Chain(), (torch.randn(64),))
    naive = export(Chain(), (torch.randn(64),),
                   config=torchlight.ExecutorchBackendConfig(memory_planning="naive"))
    g, n = greedy.memory_summary(), naive.memory_summary()
    assert g.num_planned == n.num_planned == 13  # The input and 12 results.
    assert n.total_bytes == n.unshared_bytes == 13 * 256
    # At most the input, one intermediate and one result are live together.
    assert g.total_bytes <= 3 * 256 < n.total_bytes
    # The reported arena is what the program asks the runtime for.
    for prog, summary in ((greedy, g), (naive, n)):
        assert prog.program.execution_plan[0].non_const_buffer_sizes == [0, summary.total_bytes]


@pytest.mark.parametrize("algorithm", ["greedy", "naive"])
def test_plans_run_correctly(runtime, algorithm):
    model = Diamond()
    inputs = (torch.randn(8, 16), torch.randn(1, 16), torch.randn(8, 1))
    prog = export(model, inputs,
                  config=torchlight.ExecutorchBackendConfig(memory_planning=algorithm))
    module = runtime.load(prog.buffer)
    assert module.method_meta()["planned_buffer_sizes"] == [prog.memory_summary().total_bytes]
    for _ in range(2):
        inputs = (torch.randn(8, 16), torch.randn(1, 16), torch.randn(8, 1))
        expected = model(*inputs)
        actual = module.run("forward", list(inputs))
        assert all(torch.equal(a, e) for a, e in zip(actual, expected))


def test_alignment_is_configurable():
    config = torchlight.ExecutorchBackendConfig(memory_alignment=64)
    prog = export(Diamond(), (torch.randn(8, 16), torch.randn(1, 16), torch.randn(8, 1)),
                  config=config)
    plan = prog.program.execution_plan[0]
    offsets = [v.val.allocation_info.offset for v in plan.values
               if isinstance(v.val, schema.Tensor) and v.val.allocation_info is not None]
    assert offsets and all(o % 64 == 0 for o in offsets)
    assert prog.memory_summary().total_bytes % 64 == 0
    with pytest.raises(ValueError, match="power of two"):
        export(Chain(), (torch.randn(4),),
               config=torchlight.ExecutorchBackendConfig(memory_alignment=24))


def test_inputs_and_outputs_left_to_the_caller(runtime):
    model = Diamond()
    inputs = (torch.randn(8, 16), torch.randn(1, 16), torch.randn(8, 1))
    config = torchlight.ExecutorchBackendConfig(alloc_graph_input=False,
                                                alloc_graph_output=False)
    prog = export(model, inputs, config=config)
    plan = prog.program.execution_plan[0]
    for index in plan.inputs + plan.outputs:
        tensor = plan.values[index].val
        assert tensor.allocation_info is None and tensor.data_buffer_idx == 0
    planned = export(model, inputs)
    assert prog.memory_summary().total_bytes < planned.memory_summary().total_bytes

    module = runtime.load(prog.buffer)
    meta = module.method_meta()
    assert not any(io["tensor"]["memory_planned"] for io in meta["inputs"] + meta["outputs"])
    # Several runs: caller-bound outputs must stay valid from run to run.
    for _ in range(3):
        inputs = (torch.randn(8, 16), torch.randn(1, 16), torch.randn(8, 1))
        expected = model(*inputs)
        actual = module.run("forward", list(inputs))
        assert all(torch.equal(a, e) for a, e in zip(actual, expected))


def test_unknown_algorithm_is_rejected():
    with pytest.raises(ValueError, match="unknown memory planning algorithm 'best'"):
        export(Chain(), (torch.randn(4),),
               config=torchlight.ExecutorchBackendConfig(memory_planning="best"))
