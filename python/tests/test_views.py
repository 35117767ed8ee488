"""Copy-free views (passes/alias_views.py): reshapes and outer selects/slices
of planned intermediates share their base's bytes. Static shapes emit no
instruction for them; dynamic shapes keep the *_copy call to resize the view,
with out in the base's memory (the kernel copies nothing). Views of inputs,
constants and mutable buffers, and views that are graph outputs, keep their
copy. Every program runs in the C++ runtime with eager's results (exactly:
the views move no arithmetic)."""

from __future__ import annotations

import itertools
from typing import Dict, List, Tuple

import pytest
import torch
from torch.export import Dim

import torchlight
from helpers import export
from torchlight import ops
from torchlight.passes.memory_planning import ALIASES, ALLOCATION
from torchlight.passes.out_variants import ALIAS_OF, ALIAS_OFFSET, OUT_ALLOCS, VIEW_ALIAS
from torchlight.pte import schema

NO_ALIAS = torchlight.ExecutorchBackendConfig(alias_views=False)
VIEW_OPS = {"aten::view_copy.out", "aten::unsqueeze_copy.out", "aten::squeeze_copy.dims_out",
            "aten::squeeze_copy.dim_out", "aten::select_copy.int_out",
            "aten::slice_copy.Tensor_out", "aten::alias_copy.out", "aten::expand_copy.out"}


class StaticViews(torch.nn.Module):
    def forward(self, x):                      # x: [4, 6]
        a = x * 2.0                            # the base, a planned intermediate
        b = a.view(2, 12)
        c = b.reshape(24).unsqueeze(0)         # a view of a view of a: [1, 24]
        d = c.squeeze(0).flatten()             # [24]
        e = a[1]                               # select along dim 0: bytes 24..48
        f = a[1:3]                             # slice along dim 0: bytes 24..72
        g = a.view(1, 24)[0, 6:12]             # slice after size-1 dims: bytes 24..48
        return d + 1.0, e * 3.0, f - 1.0, g * 5.0, a.view(6, 4) * 4.0


class DynamicViews(torch.nn.Module):
    def forward(self, x):                      # x: [batch, 6]
        a = x * 2.0
        b = a.view(-1, 3, 2).unsqueeze(1)      # [batch, 1, 3, 2]
        return b * 1.5 + 1.0, a.reshape(-1) - 1.0


class LongLivedView(torch.nn.Module):
    """The base is dead once viewed, but the view is read at the very end:
    the temporaries in between must not take the base's bytes."""

    def forward(self, x):                      # x: [16]
        v = (x + 1.0).view(4, 4)
        t = x * 3.0
        for i in range(4):
            t = t * 1.5 + float(i)
        return v * 2.0 + t.view(4, 4)


def _kernel_calls(prog) -> List[Tuple[str, list]]:
    plan = prog.program.execution_plan[0]
    return [(plan.operators[i.instr_args.op_index].qualified_name, i.instr_args.args)
            for i in plan.chains[0].instructions if isinstance(i.instr_args, schema.KernelCall)]


def _run_like_eager(runtime, model, prog, make_inputs, runs=2):
    module = runtime.load(prog.buffer)
    for _ in range(runs):
        inputs = make_inputs()
        with torch.no_grad():
            expected = model(*inputs)
        expected = expected if isinstance(expected, tuple) else (expected,)
        actual = module.run("forward", list(inputs))
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert torch.equal(a, e)


def _roots(node: torch.fx.Node) -> list:
    """The storage-owning nodes of a node's value, following allocs, aliases
    and torch.cond results (either branch's)."""
    if ops.is_alloc(node):
        return [node.meta[ALIAS_OF] if ALIAS_OF in node.meta else node]
    if ALIASES in node.meta:
        return [r for a in node.meta[ALIASES] for r in _roots(a)]
    allocs = node.meta.get(OUT_ALLOCS)
    if allocs and len(allocs) == 1:
        return _roots(allocs[0])
    if node.op == "call_function" and getattr(node.target, "__name__", "") == "getitem":
        allocs = node.args[0].meta.get(OUT_ALLOCS)
        return _roots(allocs[node.args[1]]) if allocs else []
    return [node]


def _check_no_live_overlap(method):
    """Recomputes lifetimes independently of the planner, with every alias
    standing for its root: roots live together never share bytes."""
    nodes = list(method.graph.nodes)
    spans: Dict[torch.fx.Node, List[int]] = {}
    for i, n in enumerate(nodes):
        if (n.op == "placeholder" or ops.is_alloc(n)) and ALLOCATION in n.meta \
                and ALIAS_OF not in n.meta:
            spans[n] = [i, i]
        for used in n.all_input_nodes:
            for root in _roots(used):
                if root in spans:
                    spans[root][1] = max(spans[root][1], len(nodes) if n.op == "output" else i)
    for buffer in method.mutable_buffers:
        spans[buffer] = [0, len(nodes)]
    for a, b in itertools.combinations(spans, 2):
        (sa, ea), (sb, eb) = spans[a], spans[b]
        if sa <= eb and sb <= ea:
            _, oa = a.meta[ALLOCATION]
            _, ob = b.meta[ALLOCATION]
            na = a.meta["val"].numel() * a.meta["val"].element_size()
            nb = b.meta["val"].numel() * b.meta["val"].element_size()
            assert oa + na <= ob or ob + nb <= oa, f"{a.name} and {b.name} overlap while live"


def test_static_views_emit_no_instruction_and_share_the_base(runtime):
    model = StaticViews()
    prog = export(model, (torch.randn(4, 6),))
    assert not VIEW_OPS & set(prog.operators()), prog.operators()
    summary = prog.memory_summary()
    assert summary.aliased_views == 10 and summary.resized_in_place_views == 0
    method = prog.method_graph()
    offsets = {}
    for node in method.graph.nodes:
        if ops.is_alloc(node) and node.meta.get(VIEW_ALIAS) == "static":
            root = node.meta[ALIAS_OF]
            assert ALIAS_OF not in root.meta, "views of views resolve to the root"
            memory_id, offset = root.meta[ALLOCATION]
            assert node.meta[ALLOCATION] == (memory_id, offset + node.meta[ALIAS_OFFSET])
            offsets[tuple(node.meta["val"].shape)] = node.meta[ALIAS_OFFSET]
    # a[1] and a[1:3] start one row (6 floats) in; a.view(1, 24)[0, 6:12] too.
    assert offsets[(6,)] == offsets[(2, 6)] == 24
    _check_no_live_overlap(method)
    _run_like_eager(runtime, model, prog, lambda: (torch.randn(4, 6),))


def test_aliasing_shrinks_the_arena():
    for model, inputs in ((StaticViews(), (torch.randn(4, 6),)),
                          (LongLivedView(), (torch.randn(16),))):
        aliased = export(model, inputs)
        copied = export(model, inputs, config=NO_ALIAS)
        assert copied.memory_summary().aliased_views == 0
        assert VIEW_OPS & set(copied.operators())
        a, c = aliased.memory_summary(), copied.memory_summary()
        assert a.num_planned < c.num_planned and a.unshared_bytes < c.unshared_bytes
        # A view keeps its base alive longer, which reuse may or may not absorb.
        assert a.total_bytes <= c.total_bytes
        assert len(_kernel_calls(aliased)) < len(_kernel_calls(copied))
    big = export(StaticViews(), (torch.randn(4, 6),)).memory_summary().total_bytes
    assert big < export(StaticViews(), (torch.randn(4, 6),),
                        config=NO_ALIAS).memory_summary().total_bytes


def test_base_stays_live_while_a_view_is_used(runtime):
    model = LongLivedView()
    prog = export(model, (torch.randn(16),))
    assert prog.memory_summary().aliased_views == 2
    _check_no_live_overlap(prog.method_graph())
    _run_like_eager(runtime, model, prog, lambda: (torch.randn(16),), runs=3)


def test_dynamic_views_resize_in_place(runtime):
    model = DynamicViews()
    batch = Dim("batch", min=1, max=16)
    prog = export(model, (torch.randn(4, 6),), dynamic_shapes=({0: batch},))
    summary = prog.memory_summary()
    assert summary.aliased_views == summary.resized_in_place_views == 3
    plan = prog.program.execution_plan[0]
    views = [args for name, args in _kernel_calls(prog) if name in VIEW_OPS]
    assert len(views) == 3
    for args in views:  # self and out: the same arena bytes, a dynamic shape
        self_t, out_t = plan.values[args[0]].val, plan.values[args[-2]].val
        assert out_t.allocation_info == self_t.allocation_info
        assert out_t.shape_dynamism == schema.TensorShapeDynamism.DYNAMIC_BOUND
    module = runtime.load(prog.buffer)
    for rows in (1, 5, 16, 2):
        x = torch.randn(rows, 6)
        actual = module.run("forward", [x])
        for a, e in zip(actual, model(x)):
            assert torch.equal(a, e)


class ViewsInBranches(torch.nn.Module):
    def forward(self, x):                      # x: [2, 3]
        a = x * 2.0

        def positive(a):
            return ((a + 1.0).view(6) * 3.0).view(2, 3)   # a branch result that is a view

        def negative(a):
            return (a - 1.0).view(6)[2:5].sum() + a

        y = torch.cond(a.sum() > 0, positive, negative, (a,))
        return y.view(3, 2) * 1.0 + a.view(3, 2)


def test_views_inside_cond_branches(runtime):
    model = ViewsInBranches()
    prog = export(model, (torch.randn(2, 3),))
    assert prog.memory_summary().aliased_views >= 4
    method = prog.method_graph()
    live = set(method.graph.nodes)
    for node in method.graph.nodes:  # cond results name nodes still in the graph
        assert all(a in live for a in node.meta.get(ALIASES, ()))
    _check_no_live_overlap(method)
    module = runtime.load(prog.buffer)
    taken = set()
    for x in [torch.ones(2, 3), -torch.ones(2, 3)] + [torch.randn(2, 3) for _ in range(4)]:
        taken.add(bool(x.sum() > 0))
        (actual,) = module.run("forward", [x])
        assert torch.equal(actual, model(x))
    assert taken == {True, False}


class ViewOfInput(torch.nn.Module):
    def forward(self, x):
        return x.view(-1) * 2.0


class ViewOfConstant(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(2, 3))

    def forward(self, x):
        return x + self.w.view(-1)


class ViewOfBuffer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("state", torch.zeros(2, 3))

    def forward(self, x):
        self.state.add_(x)
        return self.state.view(-1) * 1.0


class ViewIsOutput(torch.nn.Module):
    def forward(self, x):
        a = x * 2.0
        return a, a.view(-1), (a + 1.0).view(3, 2)


@pytest.mark.parametrize("model_cls,shape,config", [
    (ViewOfInput, (2, 3), torchlight.ExecutorchBackendConfig()),
    (ViewOfInput, (2, 3), torchlight.ExecutorchBackendConfig(alloc_graph_input=False)),
    (ViewOfConstant, (6,), torchlight.ExecutorchBackendConfig()),
    (ViewOfBuffer, (2, 3), torchlight.ExecutorchBackendConfig()),
    (ViewIsOutput, (2, 3), torchlight.ExecutorchBackendConfig()),
    (ViewIsOutput, (2, 3), torchlight.ExecutorchBackendConfig(alloc_graph_output=False)),
], ids=["input", "unplanned-input", "constant", "buffer", "output", "unplanned-output"])
def test_unsafe_views_keep_their_copy(runtime, model_cls, shape, config):
    model = model_cls()
    prog = export(model, (torch.randn(shape),), config=config)
    assert prog.memory_summary().aliased_views == 0
    plan = prog.program.execution_plan[0]
    views = [args for name, args in _kernel_calls(prog) if name == "aten::view_copy.out"]
    assert views
    for args in views:
        self_t, out_t = plan.values[args[0]].val, plan.values[args[-2]].val
        assert out_t.allocation_info is None or out_t.allocation_info != self_t.allocation_info
    reference = model_cls()
    if model_cls is ViewOfConstant:
        reference.load_state_dict(model.state_dict())
    _run_like_eager(runtime, reference, prog, lambda: (torch.randn(shape),), runs=3)
