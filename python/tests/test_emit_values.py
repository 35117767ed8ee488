"""Every EValue kind of the spec, emitted where an operator schema (or a
constant method) needs it: kernel args in schema order with defaults filled
in and the out tensor repeated as the return. Each model is decoded from
the written bytes and run in the C++ runtime against eager PyTorch
(float32, atol=1e-5, rtol=1e-5)."""

from __future__ import annotations

from typing import Dict, List

import pytest
import torch
import torch.nn.functional as F

import torchlight
from helpers import export
from torchlight.passes.emit import ProgramState, _MethodEmitter
from torchlight.pte import schema
from torchlight.pte.pte_file import read_pte

TOL = dict(atol=1e-5, rtol=1e-5)


def _calls(buffer: bytes, method: str = "forward") -> Dict[str, List[List[object]]]:
    """Operator name -> the decoded values of each call's args."""
    plan = read_pte(buffer).program.plan(method)
    calls: Dict[str, List[List[object]]] = {}
    for instruction in plan.chains[0].instructions:
        call = instruction.instr_args
        if isinstance(call, schema.KernelCall):
            name = plan.operators[call.op_index].qualified_name
            calls.setdefault(name, []).append([plan.values[a].val for a in call.args])
    return calls


def _kinds(args) -> List[str]:
    return [type(a).__name__ for a in args]


def _run_and_compare(runtime, prog, model, inputs):
    got = runtime.load(prog.buffer).run("forward", list(inputs))
    want = model(*inputs)
    want = want if isinstance(want, (tuple, list)) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, **TOL)


class Scalars(torch.nn.Module):
    """Null, Int, Double, Bool, String, IntList, in schema order."""

    def forward(self, x):
        a = x.clamp(min=-0.5)                           # Double min, Null max
        b = x.sum(dim=[1], keepdim=True)                # IntList, Bool, Null dtype
        c = F.gelu(x, approximate="tanh")               # String
        d = torch.div(x, b + 0.5, rounding_mode="floor")  # String (out_mode)
        e = F.leaky_relu(x, 0.2)                        # Double
        return a, b, c, d, e


def test_scalar_kinds_in_schema_order(runtime):
    model = Scalars()
    x = torch.randn(3, 4)
    prog = export(model, (x,))
    calls = _calls(prog.buffer)

    (clamp,) = calls["aten::clamp.out"]
    assert _kinds(clamp) == ["Tensor", "Double", "Null", "Tensor", "Tensor"]
    assert clamp[1] == schema.Double(-0.5)

    (total,) = calls["aten::sum.IntList_out"]
    assert _kinds(total) == ["Tensor", "IntList", "Bool", "Null", "Tensor", "Tensor"]
    assert total[2] == schema.Bool(True)
    plan = read_pte(prog.buffer).program.plan("forward")
    # IntList items are indices of Int values.
    assert [plan.values[i].val for i in total[1].items] == [schema.Int(1)]

    (gelu,) = calls["aten::gelu.out"]
    assert _kinds(gelu) == ["Tensor", "String", "Tensor", "Tensor"]
    assert gelu[1] == schema.String("tanh")
    (div,) = calls["aten::div.out_mode"]
    assert div[2] == schema.String("floor")

    # Defaults the model never wrote are filled in: add's alpha.
    add = calls["aten::add.out"][0]
    assert _kinds(add) == ["Tensor", "Tensor", "Int", "Tensor", "Tensor"]
    assert add[2] == schema.Int(1)
    (leaky,) = calls["aten::leaky_relu.out"]
    assert leaky[1] == schema.Double(0.2)
    _run_and_compare(runtime, prog, model, (x,))


def test_out_tensor_is_repeated_as_the_return():
    prog = export(Scalars(), (torch.randn(3, 4),))
    plan = read_pte(prog.buffer).program.plan("forward")
    checked = 0
    for instruction in plan.chains[0].instructions:
        call = instruction.instr_args
        op = plan.operators[call.op_index]
        overload = getattr(getattr(torch.ops.aten, op.name.split("::")[1]), op.overload)
        (out,) = [a for a in overload._schema.arguments if a.is_out]
        # Schema arguments, then the return: the out tensor, again.
        assert len(call.args) == len(overload._schema.arguments) + 1, op.qualified_name
        assert call.args[-1] == call.args[-2], op.qualified_name
        assert isinstance(plan.values[call.args[-1]].val, schema.Tensor)
        checked += 1
    assert checked >= 6


class Lists(torch.nn.Module):
    """TensorList (cat's input, split's outs) and OptionalTensorList (indexing)."""

    def forward(self, x, idx):
        joined = torch.cat([x, x * 2], dim=1)           # TensorList
        picked = x[:, idx]                              # Tensor?[] = [None, idx]
        rows = x[idx[:2]]                               # Tensor?[] = [idx]
        first, rest = torch.split(x, [1, 3], dim=1)     # IntList sizes, TensorList outs
        return joined, picked, rows, first, rest


def test_tensor_list_kinds(runtime):
    model = Lists()
    x, idx = torch.randn(3, 4), torch.tensor([2, 0, 1])
    prog = export(model, (x, idx))
    calls = _calls(prog.buffer)
    plan = read_pte(prog.buffer).program.plan("forward")

    (cat,) = calls["aten::cat.out"]
    assert _kinds(cat) == ["TensorList", "Int", "Tensor", "Tensor"]
    assert len(cat[0].items) == 2
    assert all(isinstance(plan.values[i].val, schema.Tensor) for i in cat[0].items)

    index_calls = calls["aten::index.Tensor_out"]
    assert all(_kinds(c)[:2] == ["Tensor", "OptionalTensorList"] for c in index_calls)
    lists = sorted((c[1].items for c in index_calls), key=len)
    assert len(lists[0]) == 1 and lists[0][0] >= 0
    none_first, tensor_second = lists[1]
    assert none_first == -1  # None: all of dimension 0.
    assert isinstance(plan.values[tensor_second].val, schema.Tensor)

    (split,) = calls["aten::split_with_sizes_copy.out"]
    # The schema returns nothing; as upstream's emitter does, a second
    # TensorList naming the same out tensors follows `out`.
    assert _kinds(split) == ["Tensor", "IntList", "Int", "TensorList", "TensorList"]
    assert [plan.values[i].val for i in split[1].items] == [schema.Int(1), schema.Int(3)]
    assert len(split[3].items) == 2
    assert split[4].items == split[3].items
    _run_and_compare(runtime, prog, model, (x, idx))


class Upsample(torch.nn.Module):
    def forward(self, x):
        return F.interpolate(x, scale_factor=2.0, mode="nearest")


def test_double_list_from_scale_factors(runtime):
    model = Upsample()
    x = torch.randn(1, 2, 3, 3)
    ep = torch.export.export(model, (x,))
    keep = torchlight.EdgeCompileConfig(preserve_ops=[torch.ops.aten.upsample_nearest2d.vec])
    prog = torchlight.to_edge(ep, compile_config=keep).to_executorch()
    (call,) = _calls(prog.buffer)["aten::upsample_nearest2d.vec_out"]
    assert _kinds(call) == ["Tensor", "Null", "DoubleList", "Tensor", "Tensor"]
    assert call[2] == schema.DoubleList([2.0, 2.0])
    _run_and_compare(runtime, prog, model, (x,))


# A custom operator taking bool[]: no core ATen operator with a kernel in the
# runtime takes one, so this checks the emitted kind only.
_LIB = torch.library.Library("tl_values_test", "DEF")
_LIB.define("keep(Tensor x, bool[] mask) -> Tensor")
_LIB.define("keep.out(Tensor x, bool[] mask, *, Tensor(a!) out) -> Tensor(a!)")


def _keep(x, mask):
    out = x.clone()
    for i, kept in enumerate(mask):
        if not kept:
            out[..., i] = 0
    return out


def _keep_out(x, mask, *, out):
    out.copy_(_keep(x, mask))
    return out


_LIB.impl("keep", _keep, "CompositeExplicitAutograd")
_LIB.impl("keep.out", _keep_out, "CompositeExplicitAutograd")


def test_bool_list_from_a_bool_list_argument():
    class Keep(torch.nn.Module):
        def forward(self, x):
            return torch.ops.tl_values_test.keep(x, [True, False, True])

    prog = export(Keep(), (torch.randn(2, 3),),
                  config=torchlight.ExecutorchBackendConfig(check_kernels=False))
    (call,) = _calls(prog.buffer)["tl_values_test::keep.out"]
    assert _kinds(call) == ["Tensor", "BoolList", "Tensor", "Tensor"]
    assert call[1] == schema.BoolList([True, False, True])


def test_none_for_a_tensor_argument_is_an_empty_tensor():
    """The spec: a None (non-optional) Tensor argument is an empty tensor
    value; a None Tensor? argument is Null."""
    emitter = _MethodEmitter(None, ProgramState(), False)
    tensor_arg = torch.ops.aten.add.out._schema.arguments[0]           # Tensor self
    optional_arg = torch.ops.aten.convolution.out._schema.arguments[2]  # Tensor? bias
    empty = emitter.values[emitter.kernel_argument(None, tensor_arg)].val
    assert empty == schema.Tensor(scalar_type=schema.ScalarType.BYTE, sizes=[0], dim_order=[0])
    assert emitter.values[emitter.kernel_argument(None, optional_arg)].val == schema.Null()


def test_constant_methods_of_every_scalar_kind(runtime):
    class Tiny(torch.nn.Module):
        def forward(self, x):
            return x + 1

    ep = torch.export.export(Tiny(), (torch.randn(2),))
    constants = {"name": "tiny-v1", "is_quantized": False, "max_seq_len": 128,
                 "rope_theta": 10000.0, "shape": [1, 2, 3], "dtype": torch.float16,
                 "nothing": None, "table": torch.tensor([1.5, -2.0]),
                 "nested": {"flags": [True, False], "scale": 0.5}}
    prog = torchlight.to_edge(ep, constant_methods=constants).to_executorch()
    program = read_pte(prog.buffer).program

    def kinds(name):
        plan = program.plan(name)
        return [type(plan.values[i].val).__name__ for i in plan.outputs]

    assert kinds("name") == ["String"]
    assert kinds("is_quantized") == ["Bool"]
    assert kinds("max_seq_len") == ["Int"]
    assert kinds("rope_theta") == ["Double"]
    assert kinds("shape") == ["Int", "Int", "Int"]
    assert kinds("dtype") == ["Int"]
    assert kinds("nothing") == ["Null"]
    assert kinds("table") == ["Tensor"]
    assert kinds("nested") == ["Bool", "Bool", "Double"]
    assert "flags" in program.plan("nested").container_meta_type.encoded_out_str

    module = runtime.load(prog.buffer)
    assert module.run("name") == ["tiny-v1"]
    assert module.run("is_quantized") == [False]
    assert module.run("max_seq_len") == [128]
    assert module.run("rope_theta") == [10000.0]
    assert module.run("shape") == [1, 2, 3]
    assert module.run("dtype") == [int(schema.ScalarType.HALF)]
    assert module.run("nothing") == [None]
    torch.testing.assert_close(module.run("table", as_numpy=False)[0],
                               torch.tensor([1.5, -2.0]))
    assert module.run("nested") == [True, False, 0.5]


def test_constant_method_rejects_unknown_types():
    class Tiny(torch.nn.Module):
        def forward(self, x):
            return x.relu()

    ep = torch.export.export(Tiny(), (torch.randn(2),))
    with pytest.raises(torchlight.ExportError, match="constant method 'bad'.*object"):
        torchlight.to_edge(ep, constant_methods={"bad": object()}).to_executorch()
