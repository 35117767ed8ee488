"""Compatibility with upstream ExecuTorch (release 0.5) in both directions:
our files laid out as upstream's emitter lays them out (so they load in its
runtime), the dim_order_ops operators its to_edge emits, and the named
kernel targets. Numerics against eager PyTorch (float32 atol=rtol=1e-5,
float16 results compared as float16)."""

from __future__ import annotations

import pytest
import torch

import torchlight
from torchlight import dim_order_ops, kernel_check
from torchlight.pte import schema
from torchlight.pte.pte_file import read_pte, serialize_pte, ProgramData

TOL = dict(atol=1e-5, rtol=1e-5)


def _lookup(qualified: str):
    """The torch OpOverload for a program operator name ("aten::add.out")."""
    namespace, rest = qualified.split("::")
    name, _, overload = rest.partition(".")
    return getattr(getattr(getattr(torch.ops, namespace), name), overload or "default")


def _kernel_calls(buffer: bytes):
    plan = read_pte(buffer).program.execution_plan[0]
    for instruction in plan.chains[0].instructions:
        call = instruction.instr_args
        if isinstance(call, schema.KernelCall):
            yield plan, plan.operators[call.op_index].qualified_name, call.args


def _export(model, inputs, **edge_options):
    ep = torch.export.export(model, tuple(inputs))
    edge = torchlight.to_edge(ep, compile_config=torchlight.EdgeCompileConfig(**edge_options))
    return edge.to_executorch()


def _check_close(runtime, prog, model, inputs):
    got = runtime.load(prog.buffer).run("forward", list(inputs))
    want = model(*inputs)
    want = want if isinstance(want, (tuple, list)) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        torch.testing.assert_close(g, w, **TOL)


# --- Out-variants whose schema returns nothing ---------------------------------------


class Splits(torch.nn.Module):
    def forward(self, x):
        a, b, c = torch.split(x, [1, 2, 3], dim=1)       # split_with_sizes_copy.out
        d = torch.chunk(x, 2, dim=0)                     # chunk -> split
        e = torch.tensor_split(x, 3, dim=1)
        return a * 2, b, c + 1, d[1], e[2], torch.unbind(x, dim=1)[4]


def test_void_out_variants_carry_upstreams_return_list(runtime):
    model, x = Splits(), torch.randn(4, 6)
    prog = _export(model, (x,))
    void_calls = 0
    for plan, name, args in _kernel_calls(prog.buffer):
        op = _lookup(name)
        # Upstream's layout: every schema argument, then one return slot.
        assert len(args) == len(op._schema.arguments) + 1, name
        if op._schema.returns:
            continue
        void_calls += 1
        out_index = [i for i, a in enumerate(op._schema.arguments) if a.is_out]
        assert len(out_index) == 1
        out, ret = args[out_index[0]], args[-1]
        assert isinstance(plan.values[out].val, schema.TensorList)
        assert isinstance(plan.values[ret].val, schema.TensorList)
        assert ret != out  # A second value, as upstream's emitter writes...
        assert plan.values[ret].val.items == plan.values[out].val.items  # ...naming the same.
    assert void_calls >= 2
    _check_close(runtime, prog, model, (x,))


def test_every_kernel_call_has_upstreams_argument_count():
    """Schema arguments in order (defaults written, None as Null), then the
    return: one value for a single return, one TensorList for several or none."""
    class Mixed(torch.nn.Module):
        def forward(self, x, idx):
            values, indices = torch.max(x, dim=1)
            y = torch.nn.functional.gelu(x).clamp(min=-0.5)
            return values, indices, y.sum(dim=0), torch.index_select(x, 0, idx), x.to(torch.int32)

    prog = _export(Mixed(), (torch.randn(3, 4), torch.tensor([2, 0])))
    seen = set()
    for plan, name, args in _kernel_calls(prog.buffer):
        op = _lookup(name)
        assert len(args) == len(op._schema.arguments) + 1, name
        if len(op._schema.returns) > 1:
            assert isinstance(plan.values[args[-1]].val, schema.TensorList)
        seen.add(name)
    assert {"aten::max.dim_max", "aten::clamp.out", "aten::index_select.out"} <= seen


def _handmade_split(with_return: bool) -> schema.Program:
    """split_copy.Tensor_out of x [4] into two [2] outs, by hand, with or without the return list."""
    def planned(offset, sizes):
        return schema.Tensor(schema.ScalarType.FLOAT, sizes=list(sizes),
                             dim_order=list(range(len(sizes))),
                             allocation_info=schema.AllocationDetails.at(1, offset))

    values = [planned(0, (4,)), planned(16, (2,)), planned(32, (2,)), schema.Int(2), schema.Int(0),
              schema.TensorList([1, 2]), schema.TensorList([1, 2])]
    args = [0, 3, 4, 5] + ([6] if with_return else [])
    plan = schema.ExecutionPlan(
        name="forward", values=[schema.EValue(v) for v in values], inputs=[0], outputs=[1, 2],
        chains=[schema.Chain(instructions=[schema.Instruction(schema.KernelCall(0, args))])],
        operators=[schema.Operator("aten::split_copy", "Tensor_out")],
        non_const_buffer_sizes=[0, 48])
    return schema.Program(execution_plan=[plan])


@pytest.mark.parametrize("with_return", [True, False], ids=["upstream-layout", "our-old-layout"])
def test_split_kernel_reads_both_layouts(runtime, with_return):
    data = serialize_pte(ProgramData(_handmade_split(with_return)))
    x = torch.tensor([1.0, -2.0, 3.5, 4.0])
    got = runtime.load(data).run("forward", [x])
    want = torch.split(x, 2)
    assert len(got) == 2 and all(torch.equal(g, w) for g, w in zip(got, want))


# --- dim_order_ops ---------------------------------------------------------------------


class Casts(torch.nn.Module):
    def forward(self, x, img):
        return (x.to(torch.float16), x.int().float() * 0.5, x.to(torch.float64),
                img.to(memory_format=torch.channels_last) + 1, img.contiguous().to(torch.bfloat16))


def _dim_order_args(prog):
    """(dim_order argument, out tensor) of every dim_order_ops call: the
    argument as a list of ints, or None."""
    found = []
    for plan, name, args in _kernel_calls(prog.buffer):
        if not name.startswith("dim_order_ops::"):
            continue
        # _to_dim_order_copy.out(self, non_blocking, dim_order, out) and
        # _empty_dim_order.out(size, dim_order, out), each with its return
        # slot: upstream's out schemas.
        assert len(args) == (5 if name == "dim_order_ops::_to_dim_order_copy.out" else 4)
        assert args[-1] == args[-2]
        order = plan.values[args[-3]].val
        assert isinstance(order, (schema.Null, schema.IntList))
        items = None if isinstance(order, schema.Null) else [
            plan.values[i].val.int_val for i in order.items]
        found.append((name, items, plan.values[args[-2]].val))
    return found


def test_dim_order_ops_are_on_by_default_as_upstream(runtime):
    model = Casts()
    inputs = (torch.randn(3, 5) * 4, torch.randn(2, 3, 4, 4))
    prog = _export(model, inputs)
    ops = prog.operators()
    assert "dim_order_ops::_to_dim_order_copy.out" in ops
    assert "aten::_to_copy.out" not in ops
    calls = _dim_order_args(prog)
    assert len(calls) == 6  # x.int().float() is two casts.
    for name, order, out in calls:
        # No memory_format (a dtype cast) is contiguous for upstream: the
        # identity order, written out. channels_last too names the layout
        # the out tensor really has (our planner lays tensors out
        # contiguously), so every order here is the out's.
        assert order == out.dim_order == list(range(len(out.sizes)))
    got = runtime.load(prog.buffer).run("forward", list(inputs))
    want = model(*inputs)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        torch.testing.assert_close(g, w.contiguous(), **TOL)

    old = _export(model, inputs, _skip_dim_order=True)
    assert "aten::_to_copy.out" in old.operators()
    assert not any(op.startswith("dim_order_ops::") for op in old.operators())
    for g, w in zip(runtime.load(old.buffer).run("forward", list(inputs)), want):
        torch.testing.assert_close(g, w.contiguous(), **TOL)


class ToDtype(torch.nn.Module):
    def forward(self, x):
        return x.to(torch.float16), x.to(torch.int32), x.to(torch.bool)


class Float(torch.nn.Module):
    def forward(self, i):
        return i.float() / 3


class ChannelsLast(torch.nn.Module):
    def forward(self, img):
        return img.contiguous(memory_format=torch.channels_last) * 2


class Clone(torch.nn.Module):
    def forward(self, x):
        return x.clone() + 1, torch.clone(x, memory_format=torch.preserve_format)


class EmptyFilled(torch.nn.Module):
    def forward(self, x):
        return torch.empty(x.shape[0], 4, dtype=torch.int64).fill_(7) + x.to(torch.int64)


DEFAULT_EXPORTS = {
    "to_dtype": (ToDtype(), (torch.randn(4, 3) * 3,), ["dim_order_ops::_to_dim_order_copy.out"]),
    "float": (Float(), (torch.arange(-6, 6, dtype=torch.int32).reshape(3, 4),),
              ["dim_order_ops::_to_dim_order_copy.out"]),
    "channels_last": (ChannelsLast(), (torch.randn(2, 3, 4, 5),), []),
    "clone": (Clone(), (torch.randn(2, 5),), []),
    "empty": (EmptyFilled(), (torch.ones(3, 1),), ["dim_order_ops::_empty_dim_order.out",
                                                  "dim_order_ops::_to_dim_order_copy.out"]),
}


@pytest.mark.parametrize("name", list(DEFAULT_EXPORTS))
def test_default_export_runs_and_matches_eager(runtime, name):
    model, inputs, dim_order_ops_wanted = DEFAULT_EXPORTS[name]
    prog = _export(model, inputs)
    ops = prog.operators()
    for op in dim_order_ops_wanted:
        assert op in ops
    assert "aten::_to_copy.out" not in ops and "aten::empty.out" not in ops
    for _, order, out in _dim_order_args(prog):
        assert order is None or order == out.dim_order
    got = runtime.load(prog.buffer).run("forward", list(inputs))
    want = model(*inputs)
    want = want if isinstance(want, (tuple, list)) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        # Exact: casts, copies and fills are exact, and so are the
        # multiplications by 2 and integer additions after them.
        if w.dtype.is_floating_point and name == "float":
            torch.testing.assert_close(g, w.contiguous(), **TOL)
        else:
            assert torch.equal(g, w.contiguous())


def test_portable_target_keeps_empty_its_list_lacks_the_dim_order_form(runtime):
    model, inputs, _ = DEFAULT_EXPORTS["empty"]
    portable = kernel_check.target_kernels("executorch-portable")
    assert "dim_order_ops::_empty_dim_order.out" not in portable
    prog = _export(model, inputs, kernel_target="executorch-portable")
    ops = prog.operators()
    assert "aten::empty.out" in ops and "dim_order_ops::_to_dim_order_copy.out" in ops
    # to_executorch checked every operator against the portable list.
    got = runtime.load(prog.buffer).run("forward", list(inputs))
    assert torch.equal(got[0], model(*inputs))


def test_dim_order_ops_match_torch_semantics():
    x = torch.randn(2, 3, 4, 5)
    ref = torch.ops.dim_order_ops._to_dim_order_copy(x, dtype=torch.float16,
                                                     dim_order=[0, 2, 3, 1])
    assert ref.dtype == torch.float16 and ref.is_contiguous(memory_format=torch.channels_last)
    torch.testing.assert_close(ref, x.half())
    empty = torch.ops.dim_order_ops._empty_dim_order([2, 3], dtype=torch.int32, dim_order=[0, 1])
    assert empty.shape == (2, 3) and empty.dtype == torch.int32
    with pytest.raises(ValueError, match="no memory format"):
        dim_order_ops.memory_format_for([1, 0, 2])


# --- Named kernel targets --------------------------------------------------------------


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def test_portable_target_decomposes_linear(runtime):
    torch.manual_seed(0)
    model, x = Mlp(), torch.randn(4, 8)
    portable = kernel_check.target_kernels("executorch-portable")
    assert "aten::linear.out" not in portable and "aten::addmm.out" in portable

    ours = _export(model, (x,))
    assert "aten::linear.out" in ours.operators()
    prog = _export(model, (x,), kernel_target="executorch-portable")
    assert "aten::linear.out" not in prog.operators()
    assert set(prog.operators()) <= portable
    _check_close(runtime, prog, model, (x,))


def test_optimized_target_keeps_linear(runtime):
    model, x = Mlp(), torch.randn(4, 8)
    optimized = kernel_check.target_kernels("executorch-optimized")
    assert "aten::linear.out" in optimized
    assert kernel_check.target_kernels("executorch-portable") < optimized
    prog = _export(model, (x,), kernel_target="executorch-optimized")
    assert "aten::linear.out" in prog.operators()
    _check_close(runtime, prog, model, (x,))


def test_target_lacking_an_operator_fails_the_export_naming_it():
    class Sort(torch.nn.Module):
        def forward(self, x):
            return torch.sort(x).values + 1

    assert "aten::sort.values" in _export(Sort(), (torch.randn(3),)).operators()
    with pytest.raises(torchlight.MissingKernelsError) as info:
        _export(Sort(), (torch.randn(3),), kernel_target="executorch-portable")
    assert info.value.operators == ["aten::sort.values"]
    assert "target executorch-portable" in str(info.value)
    with pytest.raises(ValueError, match="unknown kernel target 'executorch-cuda'"):
        _export(Sort(), (torch.randn(3),), kernel_target="executorch-cuda")


def test_target_lists_are_well_formed():
    for target in kernel_check.KERNEL_TARGETS[1:]:
        names = kernel_check.target_kernels(target)
        assert len(names) > 20
        assert all("::" in n and not n.endswith(".default") for n in names)
        # Prim ops come with every upstream runtime.
        assert {"aten::sym_size.int", "executorch_prim::et_view"} <= names
    assert kernel_check.target_kernels("torchlight") is None
