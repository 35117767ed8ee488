"""torch.cond lowered to jumps and moves, run in the C++ runtime; FreeCall of
unplanned inputs. Numerics are compared with eager PyTorch at atol=1e-5,
rtol=1e-5 (float32, same operation order)."""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim

import torchlight
from helpers import export
from torchlight import ops
from torchlight.passes import control_flow
from torchlight.passes.memory_planning import ALLOCATION
from torchlight.pte import schema
from torchlight.pte.pte_file import read_pte

TOL = dict(atol=1e-5, rtol=1e-5)


class DataDependent(torch.nn.Module):
    """The branch depends on the input's values; the cond's result is used
    after more work, so its memory must survive the computations that follow."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x, y):
        def true_fn(x, y):
            return (self.lin(x) + y * 2).relu()

        def false_fn(x, y):
            return x.cos() - y

        z = torch.cond(x.sum() > 0, true_fn, false_fn, (x, y))
        w = (x * 3).exp() + y.sin()
        return z + w, w


class UnevenBranches(torch.nn.Module):
    """A long true branch and a one-op false branch, two results each."""

    def forward(self, x):
        def long_fn(x):
            a = x * 2 + 1
            b = a.relu() * a.sigmoid()
            c = torch.cat([b, a], dim=0)[: x.shape[0]]
            return c.tanh() + x, (b - a).abs()

        def short_fn(x):
            return x.neg(), x.abs()

        return torch.cond(x.mean() > 0, long_fn, short_fn, (x,))


class Nested(torch.nn.Module):
    def forward(self, x):
        def inner_true(x):
            return x * 2

        def inner_false(x):
            return x - 1

        def outer_true(x):
            return torch.cond(x.mean() > 0.5, inner_true, inner_false, (x,)) + 1

        def outer_false(x):
            return x.abs()

        return torch.cond(x.sum() > 0, outer_true, outer_false, (x,))


class SizePredicate(torch.nn.Module):
    """A SymBool predicate: the branch depends on a dynamic size."""

    def forward(self, x):
        return torch.cond(x.shape[0] > 4, lambda x: x.sin() * 2, lambda x: x.cos(), (x,)) + 1


def _instructions(prog):
    plan = prog.program.execution_plan[0]
    return plan, [i.instr_args for i in plan.chains[0].instructions]


def test_data_dependent_cond_takes_each_branch(runtime):
    model = DataDependent().eval()
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    module = runtime.load(export(model, (x, y)).buffer)
    # Alternate branches on one loaded method: state left by one branch must
    # not leak into the other.
    for sign in (1, -1, -1, 1, -1):
        x = torch.randn(3, 4).abs() * sign
        y = torch.randn(3, 4)
        got = module.run("forward", [x, y])
        want = model(x, y)
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w, **TOL)


def test_emitted_control_flow_is_jumps_and_moves():
    prog = export(DataDependent(), (torch.randn(3, 4), torch.randn(3, 4)))
    plan, instructions = _instructions(read_pte(prog.buffer))
    kinds = [type(i).__name__ for i in instructions]
    jumps = [k for k, i in enumerate(instructions) if isinstance(i, schema.JumpFalseCall)]
    moves = [k for k, i in enumerate(instructions) if isinstance(i, schema.MoveCall)]
    assert len(jumps) == 2 and len(moves) == 2, kinds
    to_else, over_else = (instructions[k] for k in jumps)
    # The first jump tests the predicate, a one-element bool tensor computed by gt.
    pred = plan.values[to_else.cond_value_index].val
    assert isinstance(pred, schema.Tensor) and pred.scalar_type == schema.ScalarType.BOOL
    assert pred.sizes == []
    # true branch, MoveCall, unconditional jump (on a constant False), else branch, MoveCall.
    assert jumps[0] < moves[0] == jumps[1] - 1 < moves[1]
    assert plan.values[over_else.cond_value_index].val == schema.Bool(False)
    assert to_else.destination_instruction == jumps[1] + 1
    assert over_else.destination_instruction == moves[1] + 1
    true_kernels = instructions[jumps[0] + 1:moves[0]]
    false_kernels = instructions[jumps[1] + 1:moves[1]]
    assert true_kernels and false_kernels
    assert all(isinstance(i, schema.KernelCall) for i in true_kernels + false_kernels)
    # Both branches move their result into the same value: the cond's result,
    # which the code after the cond reads.
    first, second = (instructions[k] for k in moves)
    assert first.move_to == second.move_to != first.move_from != second.move_from
    assert first.move_from == true_kernels[-1].args[-1]
    assert second.move_from == false_kernels[-1].args[-1]
    after = instructions[moves[1] + 1:]
    assert any(first.move_to in i.args for i in after if isinstance(i, schema.KernelCall))


def test_uneven_branches_with_two_results(runtime):
    model = UnevenBranches()
    prog = export(model, (torch.randn(5),))
    _, instructions = _instructions(prog)
    jumps = [k for k, i in enumerate(instructions) if isinstance(i, schema.JumpFalseCall)]
    moves = [k for k, i in enumerate(instructions) if isinstance(i, schema.MoveCall)]
    assert len(jumps) == 2 and len(moves) == 4
    true_len = moves[0] - jumps[0] - 1
    false_len = moves[2] - jumps[1] - 1
    assert true_len > 3 * false_len  # Really different graphs.
    module = runtime.load(prog.buffer)
    for x in (torch.randn(5).abs(), -torch.randn(5).abs(), torch.randn(5).abs()):
        got = module.run("forward", [x])
        want = model(x)
        assert len(got) == 2
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w, **TOL)


def test_nested_cond_runs_every_path(runtime):
    model = Nested()
    prog = export(model, (torch.randn(3),))
    _, instructions = _instructions(prog)
    assert sum(isinstance(i, schema.JumpFalseCall) for i in instructions) == 4
    module = runtime.load(prog.buffer)
    paths = [torch.tensor([1.0, 2.0, 3.0]),      # outer true, inner true
             torch.tensor([0.1, 0.2, 0.3]),      # outer true, inner false
             torch.tensor([-1.0, -2.0, 0.5])]    # outer false
    for x in paths:
        (got,) = module.run("forward", [x])
        torch.testing.assert_close(got, model(x), **TOL)


def test_symbolic_predicate_is_a_bool_value(runtime):
    model = SizePredicate()
    prog = export(model, (torch.randn(6),), dynamic_shapes=({0: Dim("n", max=10)},))
    plan, instructions = _instructions(prog)
    first_jump = next(i for i in instructions if isinstance(i, schema.JumpFalseCall))
    assert isinstance(plan.values[first_jump.cond_value_index].val, schema.Bool)
    assert "executorch_prim::gt.Scalar" in prog.operators()
    module = runtime.load(prog.buffer)
    for n in (2, 4, 5, 10):
        x = torch.randn(n)
        (got,) = module.run("forward", [x])
        assert got.shape == (n,)
        torch.testing.assert_close(got, model(x), **TOL)


def _byte_range(node):
    val = node.meta["val"]
    _, offset = node.meta[ALLOCATION]
    return offset, offset + val.numel() * val.element_size()


def test_branch_temporaries_share_memory_results_do_not():
    class Temps(torch.nn.Module):
        def forward(self, x):
            return torch.cond(x.sum() > 0, lambda x: ((x * 2).relu() + 1) * 3,
                              lambda x: ((x - 1).abs() * 3) - 2, (x,))

    prog = export(Temps(), (torch.randn(64),))
    nodes = list(prog.method_graph().graph.nodes)
    begin = next(k for k, n in enumerate(nodes) if n.target is control_flow.cond_begin)
    middle = next(k for k, n in enumerate(nodes) if n.target is control_flow.cond_else)
    end = next(k for k, n in enumerate(nodes) if n.target is control_flow.cond_end)
    true_allocs = [n for n in nodes[begin:middle] if ops.is_alloc(n)]
    false_allocs = [n for n in nodes[middle:end] if ops.is_alloc(n)]
    assert len(true_allocs) == len(false_allocs) == 4

    def overlap(a, b):
        (a0, a1), (b0, b1) = _byte_range(a), _byte_range(b)
        return a0 < b1 and b0 < a1

    # Only one branch runs, so their temporaries may use the same bytes ...
    assert any(overlap(t, f) for t in true_allocs[:-1] for f in false_allocs[:-1])
    # ... but each branch's result lives on after the cond (it becomes the
    # cond's result by a move), so the two results never share bytes.
    assert not overlap(true_allocs[-1], false_allocs[-1])


def test_cond_result_needs_planned_outputs():
    with pytest.raises(torchlight.ExportError, match="alloc_graph_output=True"):
        export(Nested(), (torch.randn(3),),
               config=torchlight.ExecutorchBackendConfig(alloc_graph_output=False))


def test_while_loop_is_rejected_naming_the_node():
    from torch._higher_order_ops.while_loop import while_loop

    class Loop(torch.nn.Module):
        def forward(self, x):
            return while_loop(lambda i, x: i.sum() < 3, lambda i, x: (i + 1, x * 2),
                              (torch.zeros(1), x))[1]

    ep = torch.export.export(Loop(), (torch.randn(3),))
    with pytest.raises(torchlight.ExportError) as info:
        torchlight.to_edge(ep)
    message = str(info.value)
    assert "node 'while_loop'" in message and "torch.cond only" in message
    assert "test_control_flow.py" in message  # The user's source line.


# --- FreeCall ----------------------------------------------------------------------


class ThreeInputs(torch.nn.Module):
    """x is used early, y only inside a branch, z is returned as it is."""

    def forward(self, x, y, z):
        a = x * 2
        b = torch.cond(a.sum() > 0, lambda a, y: a + y, lambda a, y: a - y, (a, y))
        return b.relu(), z


def _frees(plan, instructions):
    return {k: i.value_index for k, i in enumerate(instructions)
            if isinstance(i, schema.FreeCall)}


def test_no_free_calls_by_default():
    prog = export(ThreeInputs(), (torch.randn(4), torch.randn(4), torch.randn(4)),
                  config=torchlight.ExecutorchBackendConfig(alloc_graph_input=False))
    plan, instructions = _instructions(prog)
    assert _frees(plan, instructions) == {}


def test_free_unplanned_inputs_after_their_last_use(runtime):
    model = ThreeInputs()
    config = torchlight.ExecutorchBackendConfig(alloc_graph_input=False,
                                                free_unplanned_inputs=True)
    prog = export(model, (torch.randn(4), torch.randn(4), torch.randn(4)), config=config)
    plan, instructions = _instructions(prog)
    x, y, z = plan.inputs
    for index in plan.inputs:  # Unplanned: the caller's memory is borrowed.
        assert plan.values[index].val.allocation_info is None
    frees = _frees(plan, instructions)
    position = {value: k for k, value in frees.items()}
    assert set(position) == {x, y}  # z is an output: the caller reads it back.
    readers = {v: [k for k, i in enumerate(instructions)
                   if isinstance(i, schema.KernelCall) and v in i.args] for v in (x, y)}
    for value in (x, y):
        assert position[value] > max(readers[value])
    # y is read inside the branches; its FreeCall comes after the cond, so it
    # runs whichever branch was taken.
    last_move = max(k for k, i in enumerate(instructions) if isinstance(i, schema.MoveCall))
    assert position[y] > last_move
    assert position[x] < position[y]

    module = runtime.load(prog.buffer)
    for sign in (1, -1, 1):  # Inputs are set again on every run.
        inputs = [torch.randn(4).abs() * sign, torch.randn(4), torch.randn(4)]
        got = module.run("forward", inputs)
        for g, w in zip(got, model(*inputs)):
            torch.testing.assert_close(g, w, **TOL)
