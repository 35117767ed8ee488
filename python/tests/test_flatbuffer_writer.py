"""The generic flatbuffer writer (flatbuffer_writer.py) and the schema
parser it reads wire types from (fbs_schema.py): every table of
program.fbs written from its dataclass and read back, the dataclasses
checked against the schema, and the constructs program.fbs does not use
yet (structs, vectors of structs and strings, enum defaults, deprecated
fields) checked against flatc's own decoding of a small schema."""

from __future__ import annotations

import dataclasses
import inspect
import json
import subprocess
from dataclasses import dataclass, field
from typing import List, Optional

import pytest

from helpers import flatc_json
from torchlight.pte import codegen, pte_file, schema
from torchlight.pte.fbs_schema import FbsSchemaError, parse_fbs
from torchlight.pte.flatbuffer_writer import (FILE_IDENTIFIER, FORCE_ALIGN, FlatbufferWriteError,
                                             FlatbufferWriter, program_schema, write_flatbuffer)

# 37 distinctive bytes, so the test can find them in the written buffer.
_STORAGE = bytes(range(200, 237))
_DELEGATE_BLOB = bytes(range(100, 131))


def _every_table_program() -> schema.Program:
    """A program holding at least one object of every table in program.fbs,
    with non-default values in every field."""
    tensor = schema.Tensor(
        schema.ScalarType.HALF, storage_offset=3, sizes=[2, 3], dim_order=[1, 0],
        requires_grad=True, data_buffer_idx=1,
        allocation_info=schema.AllocationDetails.at(2, (5 << 32) | 64), layout=1,
        shape_dynamism=schema.TensorShapeDynamism.DYNAMIC_BOUND,
        extra_tensor_info=schema.ExtraTensorInfo(
            mutable_data_segments_idx=2, fully_qualified_name="layer.weight",
            location=schema.TensorDataLocation.EXTERNAL, device_type=schema.DeviceType.CUDA,
            device_index=-3))
    values = [tensor, schema.Null(), schema.Int(-(1 << 40)), schema.Bool(True),
              schema.Double(-2.25), schema.String("héllo"), schema.IntList([2, 0]),
              schema.DoubleList([0.5, -1e300]), schema.BoolList([False, True, True]),
              schema.TensorList([0]), schema.OptionalTensorList([0, -1])]
    instructions = [schema.KernelCall(0, [0, 2, 0]), schema.DelegateCall(0, [0, 0]),
                    schema.MoveCall(0, 1), schema.JumpFalseCall(3, 0), schema.FreeCall(0)]
    frames = [schema.FrameList([schema.Frame("model.py", 12 + i, "forward", "x = y")])
              for i in range(len(instructions))]
    plan = schema.ExecutionPlan(
        name="forward",
        container_meta_type=schema.ContainerMetadata("in-spec", "out-spec"),
        values=[schema.EValue(v) for v in values], inputs=[0], outputs=[0],
        chains=[schema.Chain(inputs=[0], outputs=[0],
                             instructions=[schema.Instruction(i) for i in instructions],
                             stacktrace=frames)],
        operators=[schema.Operator("aten::add", "out")],
        delegates=[schema.BackendDelegate(
            "XnnpackBackend", schema.BackendDelegateDataReference(schema.DataLocation.INLINE, 0),
            [schema.CompileSpec("key", b"\x00\x01\xff")])],
        non_const_buffer_sizes=[0, 1 << 33],
        non_const_buffer_device=[schema.NonConstBufferDevice(1, schema.DeviceType.CUDA, 2)])
    return schema.Program(
        version=7, execution_plan=[plan], constant_buffer=[schema.Buffer(b""),
                                                            schema.Buffer(_STORAGE)],
        backend_delegate_data=[schema.BackendDelegateInlineData(_DELEGATE_BLOB)],
        segments=[schema.DataSegment(0, 1 << 36), schema.DataSegment(1 << 36, 9)],
        constant_segment=schema.SubsegmentOffsets(0, [0, 1 << 35]),
        mutable_data_segments=[schema.SubsegmentOffsets(1, [0, 8])],
        named_data=[schema.NamedData("weights", 1)])


def _table_types(obj, found: set) -> set:
    """Names of every dataclass reachable from `obj`."""
    if dataclasses.is_dataclass(obj):
        found.add(type(obj).__name__)
        for f in dataclasses.fields(obj):
            _table_types(getattr(obj, f.name), found)
    elif isinstance(obj, list):
        for item in obj:
            _table_types(item, found)
    return found


def test_every_table_type_writes_and_reads_back(tmp_path):
    program = _every_table_program()
    tables = {name for name, c in program_schema().composites.items() if not c.is_struct}
    assert _table_types(program, set()) == tables, "the test must cover every table"

    data = write_flatbuffer(program)
    assert data[4:8] == FILE_IDENTIFIER
    assert pte_file.read_pte(data).program == program

    # flatc decodes the same values, independently of our reader.
    decoded = flatc_json(data, tmp_path)
    (plan,) = decoded["execution_plan"]
    assert [v["val_type"] for v in plan["values"]] == [type(v).__name__ for v in
                                                       [e.val for e in program.execution_plan[0]
                                                        .values]]
    t = plan["values"][0]["val"]
    assert (t["scalar_type"], t["sizes"], t["shape_dynamism"]) == ("HALF", [2, 3], "DYNAMIC_BOUND")
    assert t["extra_tensor_info"]["device_index"] == -3
    assert t["allocation_info"]["memory_offset_high"] == 5
    assert plan["values"][2]["val"]["int_val"] == -(1 << 40)
    assert plan["values"][5]["val"]["string_val"] == "héllo"
    assert plan["non_const_buffer_sizes"] == [0, 1 << 33]
    assert plan["non_const_buffer_device"] == [{"buffer_idx": 1, "device_type": "CUDA",
                                                "device_index": 2}]
    assert [i["instr_args_type"] for i in plan["chains"][0]["instructions"]] == \
        ["KernelCall", "DelegateCall", "MoveCall", "JumpFalseCall", "FreeCall"]
    assert plan["delegates"][0]["compile_specs"][0]["value"] == [0, 1, 255]
    assert decoded["version"] == 7
    assert decoded["named_data"] == [{"key": "weights", "segment_index": 1}]

    # force_align: 16 holds for the inline constant and delegate data.
    for blob in (_STORAGE, _DELEGATE_BLOB):
        assert data.count(blob) == 1
        assert data.find(blob) % FORCE_ALIGN == 0


def test_default_values_are_not_written():
    """A scalar at its schema default is left out of the table, as flatc
    does; the reader still sees the default."""
    empty = write_flatbuffer(schema.Program())
    assert pte_file.read_pte(empty).program == schema.Program()

    def version_slot(data: bytes) -> int:  # Vtable entry of Program.version (slot 0).
        return codegen.table("Program").Program.GetRootAs(data, 0)._tab.Offset(4)

    assert version_slot(empty) == 0
    assert version_slot(write_flatbuffer(schema.Program(version=1))) != 0


def test_dataclasses_match_the_schema():
    """schema.py declares exactly program.fbs's tables, fields and union orders."""
    fbs = program_schema()
    classes = {name: cls for name, cls in inspect.getmembers(schema, dataclasses.is_dataclass)}
    assert set(classes) == set(fbs.composites)
    for name, table in fbs.composites.items():
        assert [f.name for f in dataclasses.fields(classes[name])] == \
            [f.name for f in table.fields], name
    assert [c.__name__ for c in schema.KERNEL_TYPES] == fbs.unions["KernelTypes"]
    assert [c.__name__ for c in schema.INSTRUCTION_TYPES] == fbs.unions["InstructionArguments"]
    for enum_name, enum in fbs.enums.items():
        assert {m.name: m.value for m in getattr(schema, enum_name)} == enum.values, enum_name
    assert fbs.file_identifier == FILE_IDENTIFIER
    assert max(f.force_align for t in fbs.composites.values() for f in t.fields) == FORCE_ALIGN


def test_wrong_values_name_the_field():
    bad_width = schema.Program(execution_plan=[schema.ExecutionPlan(
        "m", values=[schema.EValue(schema.Tensor(schema.ScalarType.FLOAT, sizes=[1 << 40]))])])
    with pytest.raises(FlatbufferWriteError, match=r"Tensor\.sizes"):
        write_flatbuffer(bad_width)
    bad_scalar = schema.Program(version=-1)
    with pytest.raises(FlatbufferWriteError, match=r"Program\.version"):
        write_flatbuffer(bad_scalar)
    not_a_member = schema.Program(execution_plan=[schema.ExecutionPlan(
        "m", values=[schema.EValue(schema.Operator("aten::add"))])])
    with pytest.raises(FlatbufferWriteError, match="Operator is not a member of union KernelTypes"):
        write_flatbuffer(not_a_member)
    wrong_table = schema.Program(constant_segment=schema.DataSegment(0, 0))
    with pytest.raises(FlatbufferWriteError, match="expected a SubsegmentOffsets"):
        write_flatbuffer(wrong_table)


# --- A schema with the constructs program.fbs does not use (yet) ------------

_TOY_FBS = """
// Comment /* not a block */
namespace toy;
attribute "priority";

enum Color : ushort { RED = 1, GREEN, BLUE = 9 }

struct Inner { a: byte; b: double; }   /* 16 bytes: a, 7 padding, b */
struct Outer { flag: bool; inner: Inner; tail: short; }

table Leaf { name: string; }
table Other { n: int = -4; }
union Choice { Leaf, Other }

table Root {
  color: Color = GREEN;
  old: int (deprecated);
  position: Outer;
  positions: [Outer];
  words: [string];
  choice: Choice;
  leaves: [Leaf];
  shorts: [short] (force_align: 32);
  ratio: float = 0.5;
  colors: [Color];
}

root_type Root;
file_identifier "TOY1";
"""


@dataclass
class Inner:
    a: int
    b: float


@dataclass
class Outer:
    flag: bool
    inner: Inner
    tail: int


@dataclass
class Leaf:
    name: str = ""


@dataclass
class Other:
    n: int = -4


@dataclass
class Root:
    color: int = 2
    old: Optional[int] = None
    position: Optional[Outer] = None
    positions: List[Outer] = field(default_factory=list)
    words: List[str] = field(default_factory=list)
    choice: Optional[object] = None
    leaves: List[Leaf] = field(default_factory=list)
    shorts: List[int] = field(default_factory=list)
    ratio: float = 0.5
    colors: List[int] = field(default_factory=list)


def _flatc_decode(fbs_text: str, data: bytes, tmp_path) -> dict:
    (tmp_path / "toy.fbs").write_text(fbs_text)
    (tmp_path / "toy.bin").write_bytes(data)
    result = subprocess.run([codegen.flatc_path(), "--json", "--raw-binary", "--strict-json",
                             "--defaults-json", "-o", str(tmp_path), str(tmp_path / "toy.fbs"),
                             "--", str(tmp_path / "toy.bin")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr + result.stdout
    return json.loads((tmp_path / "toy.json").read_text())


def test_toy_schema_struct_and_vector_kinds_match_flatc(tmp_path):
    fbs = parse_fbs(_TOY_FBS, "toy.fbs")
    assert fbs.enums["Color"].values == {"RED": 1, "GREEN": 2, "BLUE": 9}
    assert fbs.struct_layout("Inner")[:2] == (8, 16)
    assert fbs.struct_layout("Outer")[:2] == (8, 32)  # flag, pad, inner at 8, tail at 24, pad.
    assert [(f.name, f.slot) for f in fbs.table("Root").fields][5:7] == [("choice", 6),
                                                                        ("leaves", 7)]
    root = Root(color=9, old=123, position=Outer(True, Inner(-5, 2.5), -300),
                positions=[Outer(False, Inner(1, -1.0), 7), Outer(True, Inner(2, 1e10), 8)],
                words=["x", "", "yz"], choice=Other(77), leaves=[Leaf("l0"), Leaf()],
                shorts=[1, -2, 3], ratio=0.25, colors=[1, 9])
    data = FlatbufferWriter(fbs).finish(root, fbs.file_identifier)
    assert data[4:8] == b"TOY1"
    decoded = _flatc_decode(_TOY_FBS, data, tmp_path)
    assert decoded == {
        "color": "BLUE",
        "position": {"flag": True, "inner": {"a": -5, "b": 2.5}, "tail": -300},
        "positions": [{"flag": False, "inner": {"a": 1, "b": -1.0}, "tail": 7},
                      {"flag": True, "inner": {"a": 2, "b": 1e10}, "tail": 8}],
        "words": ["x", "", "yz"],
        "choice_type": "Other", "choice": {"n": 77},
        "leaves": [{"name": "l0"}, {"name": ""}],
        "shorts": [1, -2, 3], "ratio": 0.25, "colors": ["RED", "BLUE"],
    }
    # The deprecated field is never written; the aligned vector starts 32-aligned.
    assert (-2).to_bytes(2, "little", signed=True) in data
    start = data.find((1).to_bytes(2, "little") + (-2).to_bytes(2, "little", signed=True))
    assert start % 32 == 0

    # Defaults (color GREEN, ratio 0.5, Other.n -4) read back when left out.
    plain = FlatbufferWriter(fbs).finish(Root(choice=Other()), fbs.file_identifier)
    decoded = _flatc_decode(_TOY_FBS, plain, tmp_path)
    assert (decoded["color"], decoded["ratio"], decoded["choice"]) == ("GREEN", 0.5, {"n": -4})


def test_dataclass_with_other_fields_than_its_table_is_rejected():
    fbs = parse_fbs(_TOY_FBS)

    @dataclass
    class Leaf:  # noqa: F811 - deliberately the table's name with a wrong field.
        label: str = ""

    with pytest.raises(FlatbufferWriteError, match=r"has fields \['label'\].*has \['name'\]"):
        FlatbufferWriter(fbs).finish(Root(leaves=[Leaf()]))


@pytest.mark.parametrize("text, message", [
    ("table T { a: int (id: 0); }", "explicit field ids"),
    ("struct S { a: [int:3]; }", "fixed-size array"),
    ("table T { a: Missing; }", "T.a: unknown type 'Missing'"),
    ("table T { a: [[int]]; }", "expected ']'"),
    ("struct S { s: string; }", "struct field must be"),
    ("enum E : float { A }", "not an integer"),
    ("rpc_service S { }", "unsupported declaration 'rpc_service'"),
    ("table T { a: int", "unexpected end"),
])
def test_parser_rejects_what_it_does_not_understand(text, message):
    with pytest.raises(FbsSchemaError, match=message):
        parse_fbs(text, "bad.fbs")
