"""kernels/schemas/op_schemas.h is generated from torch's schemas and
kernels/schemas/extra_schemas.txt; it must match what the generator writes
now, and its write marks must agree with torch's alias annotations."""
import pathlib
import subprocess
import sys

import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
GENERATOR = ROOT / "tools/kernel_schemas/generate_op_schemas.py"

sys.path.insert(0, str(GENERATOR.parent))
import generate_op_schemas  # noqa: E402


def test_generated_header_is_current():
    result = subprocess.run([sys.executable, str(GENERATOR), "--check"], capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr


def test_written_arguments_follow_torchs_alias_annotations():
    schema = str(torch.ops.aten.add.out._schema).split("::", 1)[1]
    args, returns_nothing = generate_op_schemas.parse_schema("aten::add.out", schema)
    assert [(n, k, w) for n, k, w in args] == [
        ("self", "kTensor", False), ("other", "kTensor", False), ("alpha", "kScalar", False),
        ("out", "kTensor", True), ("result", "kReturn", True)]
    assert not returns_nothing
    schema = str(torch.ops.aten.split_copy.Tensor_out._schema).split("::", 1)[1]
    args, returns_nothing = generate_op_schemas.parse_schema("aten::split_copy.Tensor_out", schema)
    assert returns_nothing
    assert args[-1] == ("out", "kTensorList", True)


def test_optional_and_list_types():
    args, _ = generate_op_schemas.parse_schema(
        "x::y", "y(Tensor? a, int[2] b, int[]? c, float? d, Tensor?[] e, str f=\"none\", "
                "ScalarType? g, Tensor(a!)? h) -> ()")
    assert [k for _, k, _ in args] == ["kOptionalTensor", "kIntList", "kOptionalIntList",
                                       "kOptionalDouble", "kOptionalTensorList", "kString",
                                       "kOptionalInt", "kOptionalTensor"]
    assert [w for _, _, w in args] == [False] * 7 + [True]
