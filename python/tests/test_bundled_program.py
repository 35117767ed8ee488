"""Bundled programs (.bpte), the Python side: upstream's names, the checks
the writer makes, the wire facts of spec section 2 (checked with a small
vtable walker written here, independent of the package's reader), a round
trip, flatc decoding our file with our schema, and clean errors for cut
and corrupt files."""

from __future__ import annotations

import json
import struct
import subprocess

import pytest
import torch

import torchlight
from torchlight.devtools.bundled_program import schema as bp_schema
from torchlight.devtools.bundled_program.config import (BundledProgramError, MethodTestCase,
                                                        MethodTestSuite)
from torchlight.devtools.bundled_program.core import BundledProgram
from torchlight.pte.flatbuffer_reader import FlatbufferReadError
from torchlight.devtools.bundled_program.serialize import (
    deserialize_from_flatbuffer_to_bundled_program, serialize_from_bundled_program_to_flatbuffer)
from torchlight.pte import codegen


class AddMul(torch.nn.Module):
    """The model of upstream's bundled_program.bpte: 3x + 2 + q."""

    def forward(self, x, q):
        return 3 * x + 2 + q


class TwoMethods(torch.nn.Module):
    def forward(self, x):
        return x * 2.0

    def scale(self, x, y):
        return x * y, x - y


def _program(model, inputs):
    torch._dynamo.reset()
    return torchlight.to_edge(torch.export.export(model, inputs)).to_executorch()


def _addmul_bundle(cases=3):
    model = AddMul()
    # Two distinct tensors: exporting with one tensor passed twice ties the inputs.
    prog = _program(model, (torch.ones(2, 2, dtype=torch.int32),
                            torch.ones(2, 2, dtype=torch.int32)))
    tests = []
    for i in range(cases):
        a = torch.randint(-5, 5, (2, 2), dtype=torch.int32)
        b = torch.randint(-5, 5, (2, 2), dtype=torch.int32)
        tests.append(MethodTestCase(inputs=(a, b), expected_outputs=(model(a, b),)))
    return prog, BundledProgram(prog, [MethodTestSuite("forward", tests)])


def _two_method_program():
    model = TwoMethods()
    x = torch.randn(3)
    torch._dynamo.reset()
    eps = {"forward": torch.export.export(model, (x,)),
           "scale": torch.export.export(_Bound(model, "scale"), (x, torch.randn(3)))}
    return model, torchlight.to_edge(eps).to_executorch()


class _Bound(torch.nn.Module):
    def __init__(self, model, name):
        super().__init__()
        self.model, self.name = model, name

    def forward(self, *args):
        return getattr(self.model, self.name)(*args)


# --- An independent reader of the wire facts ------------------------------------


def _u32(data, pos):
    return struct.unpack_from("<I", data, pos)[0]


def _field(data, table, slot):
    """File position of a table's field, or 0 when absent."""
    vtable = table - struct.unpack_from("<i", data, table)[0]
    vtable_size = struct.unpack_from("<H", data, vtable)[0]
    if 4 + 2 * slot >= vtable_size:
        return 0
    voffset = struct.unpack_from("<H", data, vtable + 4 + 2 * slot)[0]
    return table + voffset if voffset else 0


def _deref(data, pos):
    return pos + _u32(data, pos)


def _vector(data, table, slot):
    """(start of elements, count) of a vector field."""
    at = _deref(data, _field(data, table, slot))
    return at + 4, _u32(data, at)


def _tables(data, table, slot):
    start, count = _vector(data, table, slot)
    return [_deref(data, start + 4 * i) for i in range(count)]


# --- Upstream's names -------------------------------------------------------------


def test_upstream_module_paths_are_the_same_objects():
    from executorch.devtools.bundled_program import config, core, serialize
    assert config.MethodTestCase is MethodTestCase
    assert config.MethodTestSuite is MethodTestSuite
    assert core.BundledProgram is BundledProgram
    assert (serialize.serialize_from_bundled_program_to_flatbuffer
            is serialize_from_bundled_program_to_flatbuffer)
    assert (serialize.deserialize_from_flatbuffer_to_bundled_program
            is deserialize_from_flatbuffer_to_bundled_program)


def test_method_test_case_flattens_nested_inputs_and_defaults_outputs():
    a, b, c = torch.ones(1), torch.zeros(2), torch.full((3,), 2.0)
    case = MethodTestCase(inputs=[a, (b, {"k": c})])
    assert [t.shape for t in case.inputs] == [a.shape, b.shape, c.shape]
    assert case.expected_outputs == []
    with pytest.raises(BundledProgramError, match="input 1 has type str"):
        MethodTestCase(inputs=[a, "text"])
    with pytest.raises(AssertionError):  # Upstream's callers catch AssertionError.
        MethodTestCase(inputs=[a], expected_outputs=[None])


# --- Round trip and wire facts ------------------------------------------------


def test_round_trip_gives_back_the_same_tables():
    _, bundle = _addmul_bundle()
    data = serialize_from_bundled_program_to_flatbuffer(bundle)
    back = deserialize_from_flatbuffer_to_bundled_program(data)
    assert back == bundle.serialize_to_schema()
    case = back.method_test_suites[0].test_cases[2]
    original = bundle.method_test_suites[0].test_cases[2]
    for value, tensor in zip(case.inputs + case.expected_outputs,
                             original.inputs + original.expected_outputs):
        t = value.val
        assert t.scalar_type == bp_schema.ScalarType.INT and t.sizes == [2, 2]
        assert t.dim_order == [0, 1]
        got = torch.frombuffer(bytearray(t.data), dtype=torch.int32).reshape(2, 2)
        assert torch.equal(got, tensor)


def test_wire_facts_identifier_alignment_union_tags_and_embedded_program():
    prog, bundle = _addmul_bundle()
    data = serialize_from_bundled_program_to_flatbuffer(bundle)
    assert data[4:8] == b"BP08"
    root = _u32(data, 0)
    # No size prefix: bytes 0..3 are the root offset, not the byte count.
    assert root < len(data) and _u32(data, 0) != len(data) - 4
    assert struct.unpack_from("<I", data, _field(data, root, 0))[0] == 2  # version
    start, size = _vector(data, root, 2)
    assert start % 32 == 0
    assert data[start:start + size] == prog.buffer  # The .pte verbatim.
    (suite,) = _tables(data, root, 1)
    name_at = _deref(data, _field(data, suite, 0))
    assert data[name_at + 4:name_at + 4 + _u32(data, name_at)] == b"forward"
    cases = _tables(data, suite, 1)
    assert len(cases) == 3
    data_starts = []
    for case in cases:
        for slot in (0, 1):  # inputs, expected_outputs
            for value in _tables(data, case, slot):
                assert data[_field(data, value, 0)] == 1  # val_type: Tensor
                tensor = _deref(data, _field(data, value, 1))
                assert data[_field(data, tensor, 0)] == 3  # scalar_type INT
                sizes_at, n = _vector(data, tensor, 1)
                assert struct.unpack_from(f"<{n}i", data, sizes_at) == (2, 2)
                data_at, nbytes = _vector(data, tensor, 2)
                assert nbytes == 16
                data_starts.append(data_at)
    assert len(data_starts) == 9 and all(p % 16 == 0 for p in data_starts)


def test_scalar_inputs_use_the_union_tags_of_the_spec():
    tables = bp_schema.BundledProgram(2, [bp_schema.BundledMethodTestSuite("m", [
        bp_schema.BundledMethodTestCase(
            inputs=[bp_schema.Value(bp_schema.Int(-7)), bp_schema.Value(bp_schema.Bool(True)),
                    bp_schema.Value(bp_schema.Double(2.5))])])], b"\x01\x02")

    class Fake:
        def serialize_to_schema(self):
            return tables

    data = serialize_from_bundled_program_to_flatbuffer(Fake())
    root = _u32(data, 0)
    (suite,) = _tables(data, root, 1)
    (case,) = _tables(data, suite, 1)
    assert [data[_field(data, v, 0)] for v in _tables(data, case, 0)] == [2, 3, 4]
    assert deserialize_from_flatbuffer_to_bundled_program(data) == tables


def test_suites_are_sorted_by_method_name():
    model, prog = _two_method_program()
    x, y = torch.randn(3), torch.randn(3)
    suites = [MethodTestSuite("scale", [MethodTestCase((x, y), model.scale(x, y))]),
              MethodTestSuite("forward", [MethodTestCase((x,), (model(x),))])]
    bundle = BundledProgram(prog, suites)
    back = deserialize_from_flatbuffer_to_bundled_program(
        serialize_from_bundled_program_to_flatbuffer(bundle))
    assert [s.method_name for s in back.method_test_suites] == ["forward", "scale"]
    scale_case = back.method_test_suites[1].test_cases[0]
    assert len(scale_case.inputs) == 2 and len(scale_case.expected_outputs) == 2


def test_channels_last_tensor_keeps_its_dim_order():
    t = torch.arange(24, dtype=torch.float32).reshape(1, 2, 3, 4).to(
        memory_format=torch.channels_last)
    from torchlight.devtools.bundled_program.core import tensor_value
    value = tensor_value(t)
    assert value.dim_order == [0, 2, 3, 1] and value.sizes == [1, 2, 3, 4]
    stored = torch.frombuffer(bytearray(value.data), dtype=torch.float32)
    assert torch.equal(stored, t.permute(0, 2, 3, 1).reshape(-1))


def test_flatc_decodes_our_file_with_our_schema(tmp_path):
    prog, bundle = _addmul_bundle(cases=2)
    path = tmp_path / "b.bpte"
    path.write_bytes(serialize_from_bundled_program_to_flatbuffer(bundle))
    result = subprocess.run([codegen.flatc_path(), "--json", "--raw-binary", "--strict-json",
                             "--defaults-json", "-o", str(tmp_path), str(bp_schema.schema_path()),
                             "--", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr + result.stdout
    decoded = json.loads((tmp_path / "b.json").read_text())
    assert decoded["version"] == 2
    assert bytes(decoded["program"]) == prog.buffer
    (suite,) = decoded["method_test_suites"]
    assert suite["method_name"] == "forward" and len(suite["test_cases"]) == 2
    for decoded_case, case in zip(suite["test_cases"], bundle.method_test_suites[0].test_cases):
        for value, tensor in zip(decoded_case["inputs"] + decoded_case["expected_outputs"],
                                 case.inputs + case.expected_outputs):
            assert value["val_type"] == "Tensor"
            t = value["val"]
            assert t["scalar_type"] == "INT" and t["sizes"] == [2, 2] and t["dim_order"] == [0, 1]
            assert bytes(t["data"]) == tensor.numpy().tobytes()


# --- The writer's checks ----------------------------------------------------------


def test_unknown_method_is_named():
    prog, _ = _addmul_bundle(cases=0)
    with pytest.raises(BundledProgramError, match="method 'backward'.*methods: forward"):
        BundledProgram(prog, [MethodTestSuite("backward", [])])


def test_input_count_mismatch_names_method_and_case():
    prog, _ = _addmul_bundle(cases=0)
    x = torch.ones(2, 2, dtype=torch.int32)
    cases = [MethodTestCase((x, x)), MethodTestCase((x,))]
    with pytest.raises(BundledProgramError,
                       match="method 'forward' test case 1 has 1 inputs, but the method takes 2"):
        BundledProgram(prog, [MethodTestSuite("forward", cases)])


def test_input_dtype_and_type_mismatches_are_named():
    prog, _ = _addmul_bundle(cases=0)
    x = torch.ones(2, 2, dtype=torch.int32)
    with pytest.raises(BundledProgramError, match="test case 0 input 1 is a tensor of "
                                                  "torch.float32, but the method's input 1 is "
                                                  "torch.int32"):
        BundledProgram(prog, [MethodTestSuite("forward", [MethodTestCase((x, x.float()))])])
    with pytest.raises(BundledProgramError, match="test case 0 input 0 is int, but the "
                                                  "method's input 0 is Tensor"):
        BundledProgram(prog, [MethodTestSuite("forward", [MethodTestCase((3, x))])])


def test_expected_outputs_must_be_tensors_of_the_output_dtype():
    prog, _ = _addmul_bundle(cases=0)
    x = torch.ones(2, 2, dtype=torch.int32)
    with pytest.raises(BundledProgramError, match="test case 0 expected output 0 is int; "
                                                  "expected outputs must be tensors"):
        BundledProgram(prog, [MethodTestSuite("forward", [MethodTestCase((x, x), [5])])])
    with pytest.raises(BundledProgramError, match="expected output 0 is a tensor of "
                                                  "torch.int64"):
        BundledProgram(prog, [MethodTestSuite("forward",
                                              [MethodTestCase((x, x), [x.long()])])])
    with pytest.raises(BundledProgramError, match="has 2 expected outputs, but the method "
                                                  "returns 1"):
        BundledProgram(prog, [MethodTestSuite("forward", [MethodTestCase((x, x), [x, x])])])


# --- The reader on bad bytes ----------------------------------------------------


def test_every_truncation_is_a_clean_error():
    _, bundle = _addmul_bundle(cases=1)
    data = serialize_from_bundled_program_to_flatbuffer(bundle)
    for length in range(len(data)):
        with pytest.raises(FlatbufferReadError):
            deserialize_from_flatbuffer_to_bundled_program(data[:length])


def test_wrong_identifier_and_bad_union_tag_are_named():
    _, bundle = _addmul_bundle(cases=1)
    data = bytearray(serialize_from_bundled_program_to_flatbuffer(bundle))
    with pytest.raises(FlatbufferReadError, match="identifier is b'ET12', expected b'BP08'"):
        deserialize_from_flatbuffer_to_bundled_program(data[:4] + b"ET12" + data[8:])
    root = _u32(data, 0)
    (suite,) = _tables(data, root, 1)
    (case,) = _tables(data, suite, 1)
    value = _tables(data, case, 0)[0]
    data[_field(data, value, 0)] = 9
    with pytest.raises(FlatbufferReadError, match="inputs\\[0\\].val: union tag 9"):
        deserialize_from_flatbuffer_to_bundled_program(bytes(data))


def test_flipped_bytes_never_escape_as_other_errors():
    _, bundle = _addmul_bundle(cases=1)
    data = serialize_from_bundled_program_to_flatbuffer(bundle)
    # Offsets and lengths live in the tables, before the embedded program.
    program_start, _ = _vector(data, _u32(data, 0), 2)
    for pos in range(0, program_start):
        for flip in (0x01, 0x80, 0xFF):
            corrupt = bytearray(data)
            corrupt[pos] ^= flip
            try:
                deserialize_from_flatbuffer_to_bundled_program(bytes(corrupt))
            except FlatbufferReadError:
                pass


# --- `torchlight verify` on files this writer made ---------------------------------

CLI = codegen.schema_path().parents[1] / "build" / "release" / "bin" / "torchlight"


def _verify(tmp_path, data: bytes, *options):
    path = tmp_path / "model.bpte"
    path.write_bytes(data)
    # A missing binary fails: the runner builds build/release first.
    assert CLI.is_file(), f"{CLI} is missing; run ./torchlight build release"
    return subprocess.run([str(CLI), "verify", str(path), *options], capture_output=True,
                          text=True, timeout=120)


def test_cli_verifies_a_float_model_against_eager(tmp_path):
    model, prog = _two_method_program()
    cases = []
    for _ in range(3):
        x, y = torch.randn(3), torch.randn(3)
        cases.append(MethodTestCase((x, y), model.scale(x, y)))
    forward = [MethodTestCase((x,), (model(x),)) for x in (torch.randn(3), torch.randn(3))]
    bundle = BundledProgram(prog, [MethodTestSuite("scale", cases),
                                   MethodTestSuite("forward", forward)])
    result = _verify(tmp_path, serialize_from_bundled_program_to_flatbuffer(bundle))
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    case_lines = [line for line in lines if line.startswith(("PASS", "FAIL"))]
    assert [line.split()[:4] for line in case_lines] == (
        [["PASS", "forward", "case", str(i)] for i in range(2)] +
        [["PASS", "scale", "case", str(i)] for i in range(3)])
    assert lines[-1] == "5 of 5 test cases passed"


def test_cli_names_the_failing_case_and_exits_1(tmp_path):
    model, prog = _two_method_program()
    x = torch.randn(3)
    wrong = model(x).clone()
    wrong[1] += 0.5  # Far outside rtol 1e-5.
    bundle = BundledProgram(prog, [MethodTestSuite("forward", [
        MethodTestCase((x,), (model(x),)), MethodTestCase((x,), (wrong,))])])
    result = _verify(tmp_path, serialize_from_bundled_program_to_flatbuffer(bundle))
    assert result.returncode == 1
    assert "FAIL  forward  case 1  max abs error 0.5" in result.stdout
    assert "element 1 is" in result.stdout
    assert "1 test case failed: method 'forward' case 1" in result.stderr
    # A tolerance wide enough accepts it.
    assert _verify(tmp_path, serialize_from_bundled_program_to_flatbuffer(bundle),
                   "--atol", "0.6").returncode == 0


def test_cli_reports_a_cut_file_in_one_line(tmp_path):
    _, bundle = _addmul_bundle(cases=1)
    data = serialize_from_bundled_program_to_flatbuffer(bundle)
    result = _verify(tmp_path, data[:len(data) // 2])
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1
    assert "failed flatbuffer verification" in result.stderr


# --- A bundle written the way upstream writes one ------------------------------
#
# Upstream's serializer turns its dataclasses into JSON and has flatc compile
# that JSON with bundled_program_schema.fbs. This does the same with flatc
# and our .fbs (same fields, same order), around a .pte upstream's exporter
# wrote (tests/fixtures/upstream/linear_constant_buffer.pte: 3x + 2 over
# float32 [2, 2]), with 10 cases as upstream's gen_bundled_program.py makes.

UPSTREAM_PTE = codegen.schema_path().parents[1] / "tests" / "fixtures" / "upstream" / \
    "linear_constant_buffer.pte"


def _tensor_json(t: torch.Tensor) -> dict:
    return {"val_type": "Tensor", "val": {
        "scalar_type": "FLOAT", "sizes": list(t.shape),
        "data": list(t.contiguous().numpy().tobytes()), "dim_order": list(range(t.dim()))}}


def _flatc_bundle(tmp_path, wrong_case=None) -> bytes:
    cases = []
    for i in range(10):
        x = torch.randn(2, 2)
        expected = 3 * x + 2
        if i == wrong_case:
            expected[1, 0] += 1.0
        cases.append({"inputs": [_tensor_json(x)], "expected_outputs": [_tensor_json(expected)]})
    document = {"version": 2, "program": list(UPSTREAM_PTE.read_bytes()),
                "method_test_suites": [{"method_name": "forward", "test_cases": cases}]}
    (tmp_path / "upstream.json").write_text(json.dumps(document))
    result = subprocess.run([codegen.flatc_path(), "--binary", "-o", str(tmp_path),
                             str(bp_schema.schema_path()), str(tmp_path / "upstream.json")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr + result.stdout
    return (tmp_path / "upstream.bpte").read_bytes()


def test_flatc_written_bundle_has_the_spec_layout_and_reads_back(tmp_path):
    data = _flatc_bundle(tmp_path)
    assert data[4:8] == b"BP08"
    root = _u32(data, 0)
    vtable = root - struct.unpack_from("<i", data, root)[0]
    assert struct.unpack_from("<3H", data, vtable + 4) == (4, 8, 12)  # As spec 2.4.
    start, size = _vector(data, root, 2)
    assert start % 32 == 0 and data[start:start + size] == UPSTREAM_PTE.read_bytes()
    back = deserialize_from_flatbuffer_to_bundled_program(data)
    assert back.version == 2 and len(back.method_test_suites[0].test_cases) == 10


def test_cli_verifies_the_upstream_style_bundle_and_names_a_wrong_case(tmp_path):
    good = _verify(tmp_path, _flatc_bundle(tmp_path))
    assert good.returncode == 0, good.stdout + good.stderr
    assert good.stdout.splitlines()[-1] == "10 of 10 test cases passed"
    bad = _verify(tmp_path, _flatc_bundle(tmp_path, wrong_case=6))
    assert bad.returncode == 1
    assert "FAIL  forward  case 6  max abs error 1" in bad.stdout
    assert "output 0: element 2 is" in bad.stdout
    assert "1 test case failed: method 'forward' case 6" in bad.stderr


def test_cli_copies_a_program_another_writer_left_misaligned(tmp_path):
    # The same schema without force_align on `program`: a writer that
    # ignores it places the .pte only 4-aligned.
    from torchlight.pte.fbs_schema import parse_fbs
    from torchlight.pte.flatbuffer_writer import FlatbufferWriter
    text = bp_schema.schema_path().read_text().replace("program: [ubyte] (force_align: 32);",
                                                       "program: [ubyte];")
    _, bundle = _addmul_bundle(cases=2)
    tables = bundle.serialize_to_schema()
    cases = tables.method_test_suites[0].test_cases
    for _ in range(8):  # Each extra case moves the program by its size.
        data = FlatbufferWriter(parse_fbs(text)).finish(tables, b"BP08")
        start, _ = _vector(data, _u32(data, 0), 2)
        if start % 32:
            break
        cases.append(cases[0])
    assert start % 32, "no misaligned layout found"
    result = _verify(tmp_path, data)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "(program copied: it was not 32-byte aligned)" in result.stdout
