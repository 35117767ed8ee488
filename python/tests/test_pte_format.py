"""The written file: structure against the reference fixture, flatc
decoding, header, segments, alignment, constant deduplication, round trips."""

from __future__ import annotations

import struct

import pytest
import torch

import torchlight
from helpers import FIXTURES, export, flatc_json
from torchlight.pte import pte_file, schema
from torchlight.pte.flatbuffer_writer import write_flatbuffer


class AddOne(torch.nn.Module):
    def forward(self, x):
        return x + 1.0


def _kinds(plan: schema.ExecutionPlan, indices):
    return [type(plan.values[i].val).__name__ for i in indices]


def test_add_one_matches_reference_fixture_structure():
    """Our `x + 1.0` against add_eh.pte, written by the reference tool chain."""
    ours = pte_file.read_pte(export(AddOne(), (torch.randn(3),)).buffer)
    ref = pte_file.read_pte((FIXTURES / "add_eh.pte").read_bytes())
    p, r = ours.program.execution_plan[0], ref.program.execution_plan[0]

    assert [o.qualified_name for o in p.operators] == ["aten::add.out"]
    assert p.operators == r.operators
    # Same value kinds in the same order: constant 1.0, x, out, alpha.
    assert [type(v.val).__name__ for v in p.values] == [type(v.val).__name__ for v in r.values] \
        == ["Tensor", "Tensor", "Tensor", "Int"]
    assert p.values[0].val == r.values[0].val  # The 0-d float32 constant, data_buffer_idx 1.
    assert p.values[3].val == r.values[3].val == schema.Int(1)  # alpha
    # args = self, other, alpha, out, out (the return).
    (ki,) = p.chains[0].instructions
    (kr,) = r.chains[0].instructions
    assert ki.instr_args == kr.instr_args == schema.KernelCall(0, [1, 0, 3, 2, 2])
    assert (p.inputs, p.outputs) == (r.inputs, r.outputs) == ([1], [2])
    for i in (1, 2):  # Planned in arena 1, 16-byte aligned; offsets may differ.
        a, b = p.values[i].val, r.values[i].val
        assert (a.sizes, a.dim_order, a.scalar_type) == (b.sizes, b.dim_order, b.scalar_type)
        assert a.allocation_info.memory_id == 1 and a.allocation_info.offset % 16 == 0
    assert p.non_const_buffer_sizes == r.non_const_buffer_sizes == [0, 32]
    assert p.container_meta_type == r.container_meta_type
    # Constant segment: offsets list with entry 0 reserved, the same 4 bytes.
    assert ours.program.constant_segment == ref.program.constant_segment
    assert ours.program.segments == ref.program.segments
    assert ours.constant_bytes(1, 4) == ref.constant_bytes(1, 4) == struct.pack("<f", 1.0)
    assert ours.header == ref.header


def test_flatc_decodes_exported_program(tmp_path):
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.arange(4.0))

        def forward(self, x):
            return x * self.w + 2.0

    prog = export(Model(), (torch.randn(4),))
    decoded = flatc_json(prog.buffer, tmp_path)
    (plan,) = decoded["execution_plan"]
    assert plan["name"] == "forward"
    assert [o["name"] + "." + o["overload"] for o in plan["operators"]] == \
        ["aten::mul.out", "aten::add.out"]
    kinds = [v["val_type"] for v in plan["values"]]
    assert kinds.count("Tensor") == 5 and kinds.count("Int") == 1
    assert [i["instr_args_type"] for i in plan["chains"][0]["instructions"]] == \
        ["KernelCall", "KernelCall"]
    assert plan["non_const_buffer_sizes"][0] == 0
    assert decoded["constant_segment"]["offsets"][0] == 0
    # Everything flatc decoded agrees with our own reader.
    ours = pte_file.read_pte(prog.buffer).program
    assert [s["size"] for s in decoded["segments"]] == [s.size for s in ours.segments]
    assert decoded["constant_segment"]["offsets"] == ours.constant_segment.offsets


def test_header_and_segment_alignment():
    class Simple(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Parameter(torch.randn(3))
            self.b = torch.nn.Parameter(torch.randn(3))

        def forward(self, x):
            return x * self.a + self.b

    for alignment in (128, 4096):
        config = torchlight.ExecutorchBackendConfig(segment_alignment=alignment)
        data = export(Simple(), (torch.randn(3),), config=config).buffer
        f = pte_file.read_pte(data)
        assert data[4:8] == b"ET12" and data[8:12] == b"eh00"
        assert f.header.length == 32
        assert f.header.segment_base_offset % alignment == 0
        assert f.header.segment_base_offset >= f.header.program_size
        assert f.header.segment_data_size == sum(s.size for s in f.program.segments)
        assert len(data) == f.header.segment_base_offset + f.header.segment_data_size
        offsets = f.program.constant_segment.offsets
        assert offsets[0] == 0 and all(o % 16 == 0 for o in offsets)
        assert offsets == [0, 0, 16]


def test_constants_are_deduplicated():
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Parameter(torch.ones(4))
            self.b = torch.nn.Parameter(torch.ones(4))  # Same bytes as a.
            self.c = torch.nn.Parameter(torch.full((4,), 2.0))

        def forward(self, x):
            return x * self.a + self.b * self.c

    prog = export(Model(), (torch.randn(4),))
    program = prog.program
    plan = program.execution_plan[0]
    indices = [v.val.data_buffer_idx for v in plan.values
               if isinstance(v.val, schema.Tensor) and v.val.data_buffer_idx > 0]
    assert len(indices) == 3 and len(set(indices)) == 2
    assert len(program.constant_segment.offsets) == 3  # Reserved entry + 2 distinct.


def test_legacy_inline_constants_and_no_header(runtime):
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(3))

        def forward(self, x):
            return x * self.w

    model = Model()
    inline = torchlight.ExecutorchBackendConfig(extract_constants=False, extended_header=False)
    data = export(model, (torch.randn(3),), config=inline).buffer
    f = pte_file.read_pte(data)
    assert f.header is None and f.program.segments == []
    assert [len(b.storage) for b in f.program.constant_buffer] == [0, 12]
    # force_align 16 on Buffer.storage: each storage vector's data is aligned.
    for buffer in f.program.constant_buffer[1:]:
        assert data.find(bytes(buffer.storage)) % 16 == 0
    x = torch.randn(3)
    with torch.no_grad():
        assert torch.equal(runtime.load(data).run("forward", [x])[0], model(x))

    with pytest.raises(ValueError, match="need the extended header"):
        export(model, (torch.randn(3),),
               config=torchlight.ExecutorchBackendConfig(extended_header=False)).buffer


def test_serialize_then_read_round_trips_every_field():
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(2, 3))
            self.register_buffer("state", torch.zeros(2, 3))

        def forward(self, x):
            self.state.mul_(0.5)
            return x * self.w + self.state

    config = torchlight.ExecutorchBackendConfig(emit_stacktrace=True)
    prog = export(Model(), (torch.randn(2, 3),), config=config)
    program = prog.program
    again = pte_file.read_pte(pte_file.serialize_pte(prog._data, pte_file.SerializeConfig()))
    assert again.program == program
    # Every field the emitter set survives writing and reading.
    assert program.execution_plan == prog._data.program.execution_plan
    assert program.mutable_data_segments[0].offsets == [0, 0]
    # Stack traces name this file for every instruction.
    (chain,) = program.execution_plan[0].chains
    assert len(chain.stacktrace) == len(chain.instructions)
    assert all(fl.items and fl.items[-1].filename == __file__ for fl in chain.stacktrace)


@pytest.mark.parametrize("fixture", ["add.pte", "add_eh.pte", "linear_constant_buffer.pte"])
def test_reader_and_writer_handle_reference_files(runtime, tmp_path, fixture):
    """Reference files parse, and re-writing their flatbuffer (no segments
    needed) gives a program the runtime still runs."""
    data = (FIXTURES / fixture).read_bytes()
    f = pte_file.read_pte(data)
    assert f.program.execution_plan[0].name == "forward"
    if f.program.segments and any(s.size for s in f.program.segments):
        return  # Segment data cannot be carried by a bare flatbuffer.
    rewritten = write_flatbuffer(f.program)
    assert pte_file.read_pte(rewritten).program == f.program
    module = runtime.load(rewritten)
    n = len(module.method_meta()["inputs"])
    inputs = [torch.ones(module.method_meta()["inputs"][i]["tensor"]["sizes"]) for i in range(n)]
    expected = {"add.pte": torch.full((1,), 2.0),
                "linear_constant_buffer.pte": torch.full((2, 2), 5.0)}[fixture]
    assert torch.equal(module.run("forward", inputs)[0], expected)


def _handmade_program(condition: bool) -> schema.Program:
    """Every value kind and every non-delegate instruction kind, by hand:
    out = x * x; if condition: out = out + x; result <- out (MoveCall)."""
    def planned(offset, sizes=(2,), dynamism=schema.TensorShapeDynamism.STATIC):
        return schema.Tensor(schema.ScalarType.FLOAT, sizes=list(sizes),
                             dim_order=list(range(len(sizes))),
                             allocation_info=schema.AllocationDetails.at(1, offset),
                             shape_dynamism=dynamism)

    values = [
        planned(0), planned(16), planned(32),                       # 0 x, 1 out, 2 result
        schema.Int(1), schema.Bool(condition), schema.Null(),       # 3 alpha, 4 cond, 5
        schema.Double(2.5), schema.String("hi"), schema.IntList([3]),
        schema.DoubleList([1.5, 2.5]), schema.BoolList([True, False]),
        schema.TensorList([0, 1]), schema.OptionalTensorList([0, -1]),
        schema.Tensor(schema.ScalarType.FLOAT, sizes=[0], dim_order=[0],
                      shape_dynamism=schema.TensorShapeDynamism.DYNAMIC_UNBOUND),  # 13
    ]
    instructions = [
        schema.KernelCall(0, [0, 0, 1, 1]),                 # out = x * x
        schema.JumpFalseCall(4, 3),                         # if not cond: skip the add
        schema.KernelCall(1, [1, 0, 3, 1, 1]),              # out = out + x
        schema.MoveCall(1, 2),                              # result = out
        schema.FreeCall(13),
    ]
    plan = schema.ExecutionPlan(
        name="forward", values=[schema.EValue(v) for v in values], inputs=[0], outputs=[2],
        chains=[schema.Chain(instructions=[schema.Instruction(i) for i in instructions])],
        operators=[schema.Operator("aten::mul", "out"), schema.Operator("aten::add", "out")],
        non_const_buffer_sizes=[0, 48])
    return schema.Program(execution_plan=[plan])


@pytest.mark.parametrize("condition", [False, True])
def test_every_value_and_instruction_kind_serializes_and_runs(runtime, tmp_path, condition):
    program = _handmade_program(condition)
    data = pte_file.serialize_pte(pte_file.ProgramData(program))
    assert pte_file.read_pte(data).program.execution_plan == program.execution_plan
    decoded = flatc_json(data, tmp_path)["execution_plan"][0]
    assert [v["val_type"] for v in decoded["values"]] == [
        "Tensor", "Tensor", "Tensor", "Int", "Bool", "Null", "Double", "String", "IntList",
        "DoubleList", "BoolList", "TensorList", "OptionalTensorList", "Tensor"]
    assert [i["instr_args_type"] for i in decoded["chains"][0]["instructions"]] == [
        "KernelCall", "JumpFalseCall", "KernelCall", "MoveCall", "FreeCall"]
    x = torch.tensor([2.0, -3.0])
    (result,) = runtime.load(data).run("forward", [x])
    assert torch.equal(result, x * x + x if condition else x * x)
