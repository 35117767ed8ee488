"""Milestone 1: tiny add/mul models exported with the public verbs, run by
the C++ runtime through the bindings, compared with eager PyTorch exactly."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchlight
from helpers import as_tuple, export


class MulAdd(torch.nn.Module):
    def forward(self, x, y):
        return x * 3 + y


class Broadcast(torch.nn.Module):
    def forward(self, x, y, z):
        return x * y + z


class Affine(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(3, 4))
        self.bias = torch.nn.Parameter(torch.randn(4))

    def forward(self, x):
        return x * self.weight + self.bias


class IntArith(torch.nn.Module):
    def forward(self, x, y):
        return x * 2 + y * y


class IntPlusHalf(torch.nn.Module):
    def forward(self, x):
        return x + 0.5


CASES = {
    "mul_add": (MulAdd, lambda: (torch.randn(2, 3), torch.randn(2, 3))),
    "broadcast": (Broadcast, lambda: (torch.randn(4, 1, 3), torch.randn(2, 1), torch.randn(3))),
    "constant_parameters": (Affine, lambda: (torch.randn(3, 4),)),
    "int32": (IntArith, lambda: (torch.randint(-100, 100, (5,), dtype=torch.int32),
                                 torch.randint(-100, 100, (5,), dtype=torch.int32))),
    "int64_plus_float": (IntPlusHalf, lambda: (torch.arange(6, dtype=torch.int64).reshape(2, 3),)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_runtime_matches_eager_exactly(runtime, name):
    model_cls, make_inputs = CASES[name]
    model = model_cls().eval()
    inputs = make_inputs()
    prog = export(model, inputs)
    module = runtime.load(prog.buffer)
    # Fresh inputs on later runs: planned memory is reused between runs.
    for run in range(3):
        args = inputs if run == 0 else make_inputs()
        with torch.no_grad():
            expected = as_tuple(model(*args))
        actual = module.run("forward", list(args))
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert a.dtype == e.dtype and a.shape == e.shape
            assert torch.equal(a, e), f"{name} run {run}: {a} != {e}"


def test_numpy_inputs_give_numpy_outputs(runtime):
    prog = export(MulAdd(), (torch.randn(2, 3), torch.randn(2, 3)))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.ones((2, 3), dtype=np.float32)
    (out,) = runtime.load(prog.buffer).run("forward", [x, y])
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out, x * 3 + y)


class TwoMethods(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.randn(4))

    def forward(self, x):
        return x * self.scale

    def shifted(self, x, y):
        return x * self.scale + y


class _Bound(torch.nn.Module):
    """Exposes one method of a module as forward, for export."""

    def __init__(self, module, method):
        super().__init__()
        self.module = module
        self.method = method

    def forward(self, *args):
        return getattr(self.module, self.method)(*args)


def test_two_methods_share_one_program(runtime):
    model = TwoMethods()
    x, y = torch.randn(4), torch.randn(4)
    programs = {
        "forward": torch.export.export(model, (x,)),
        "shifted": torch.export.export(_Bound(model, "shifted"), (x, y)),
    }
    prog = torchlight.to_edge(programs, constant_methods={"get_size": 4}).to_executorch()
    assert prog.methods == ["forward", "shifted", "get_size"]
    # The shared parameter is stored once.
    assert len(prog.program.constant_segment.offsets) == 2

    module = runtime.load(prog.buffer)
    assert sorted(module.method_names()) == ["forward", "get_size", "shifted"]
    with torch.no_grad():
        assert torch.equal(module.run("forward", [x])[0], model(x))
        assert torch.equal(module.run("shifted", [x, y])[0], model.shifted(x, y))
    assert module.run("get_size", []) == [4]


def test_dynamic_batch_dimension(runtime):
    model = Affine()
    batch = torch.export.Dim("batch", max=16)

    class Batched(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = model

        def forward(self, x, y):
            return self.inner(x) * y

    wrapped = Batched()
    prog = export(wrapped, (torch.randn(5, 3, 4), torch.randn(5, 3, 4)),
                  dynamic_shapes=({0: batch}, {0: batch}))
    plan = prog.program.execution_plan[0]
    inputs = [plan.values[i].val for i in plan.inputs]
    assert all(t.sizes == [16, 3, 4] for t in inputs), "sizes are the upper bounds"
    assert all(t.shape_dynamism == torchlight.pte.schema.TensorShapeDynamism.DYNAMIC_BOUND
               for t in inputs)

    module = runtime.load(prog.buffer)
    meta = module.method_meta("forward")
    assert meta["inputs"][0]["tensor"]["dynamism"] == 1
    for n in (1, 2, 7, 16):
        x, y = torch.randn(n, 3, 4), torch.randn(n, 3, 4)
        with torch.no_grad():
            expected = wrapped(x, y)
        (actual,) = module.run("forward", [x, y])
        assert actual.shape == (n, 3, 4)
        assert torch.equal(actual, expected)
    with pytest.raises(RuntimeError, match="more than the .* its storage holds"):
        module.run("forward", [torch.randn(17, 3, 4), torch.randn(17, 3, 4)])


def test_save_writes_the_buffer(tmp_path, runtime):
    prog = export(MulAdd(), (torch.randn(2), torch.randn(2)))
    path = tmp_path / "model.pte"
    prog.save(path)
    assert path.read_bytes() == prog.buffer
    x, y = torch.randn(2), torch.randn(2)
    assert torch.equal(runtime.load(path).run("forward", [x, y])[0], x * 3 + y)


class Reshape(torch.nn.Module):
    def forward(self, x):
        return x.reshape(x.shape[0] * 2, -1) * 2


def test_symbolic_sizes_are_computed_at_run_time(runtime, kernels):
    """A size derived from a dynamic dim is an Int value computed by
    aten::sym_size.int and executorch_prim::mul.Scalar, and the view's size
    list holds that value's index (boxed), not a number."""
    batch = torch.export.Dim("batch", max=8)
    prog = export(Reshape(), (torch.randn(4, 4),), dynamic_shapes=({0: batch},),
                  config=torchlight.ExecutorchBackendConfig(check_kernels=False))
    plan = prog.program.execution_plan[0]
    calls = [(plan.operators[i.instr_args.op_index].qualified_name, i.instr_args.args)
             for i in plan.chains[0].instructions]
    assert [name for name, _ in calls] == ["aten::sym_size.int", "executorch_prim::mul.Scalar",
                                           "aten::view_copy.out", "aten::mul.out"]
    sym_result = calls[0][1][-1]
    assert calls[1][1][0] == sym_result  # mul reads the size's Int value
    product = calls[1][1][-1]
    sizes = plan.values[calls[2][1][1]].val
    assert isinstance(sizes, torchlight.pte.schema.IntList)
    assert sizes.items[0] == product  # The list refers to the computed Int.
    assert plan.values[sizes.items[1]].val == torchlight.pte.schema.Int(-1)
    out = plan.values[calls[3][1][-1]].val
    assert out.sizes == [16, 2]

    missing = prog.missing_kernels(kernels)
    if missing:
        pytest.xfail(f"no kernels yet for {', '.join(missing)} (issue #4)")
    module = runtime.load(prog.buffer)
    for n in (1, 3, 8):
        x = torch.randn(n, 4)
        assert torch.equal(module.run("forward", [x])[0], Reshape()(x))
