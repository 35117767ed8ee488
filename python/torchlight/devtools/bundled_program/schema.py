"""The tables of a .bpte file, one dataclass per table of
devtools/bundled_program/schema/bundled_program.fbs, with the schema's field
names in its order (the generic flatbuffer writer checks both). These are
what serialize.py writes and reads back (upstream's bundled_program.schema).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Union

from torchlight.pte.schema import ScalarType

FILE_IDENTIFIER = b"BP08"
SCHEMA_VERSION = 2  # Upstream's BUNDLED_PROGRAM_SCHEMA_VERSION.


def schema_path() -> Path:
    """bundled_program.fbs (TORCHLIGHT_BUNDLED_SCHEMA overrides it)."""
    env = os.environ.get("TORCHLIGHT_BUNDLED_SCHEMA")
    path = (Path(env) if env else Path(__file__).resolve().parents[4] / "devtools" /
            "bundled_program" / "schema" / "bundled_program.fbs")
    if not path.is_file():
        raise FileNotFoundError(f"the bundled program schema was not found at {path}; set "
                                f"TORCHLIGHT_BUNDLED_SCHEMA to bundled_program.fbs")
    return path


@dataclass
class Tensor:
    scalar_type: ScalarType
    sizes: List[int] = field(default_factory=list)
    data: bytes = b""  # In the layout dim_order gives.
    dim_order: List[int] = field(default_factory=list)


@dataclass
class Int:
    int_val: int = 0


@dataclass
class Bool:
    bool_val: bool = False


@dataclass
class Double:
    double_val: float = 0.0


ValueUnion = Union[Tensor, Int, Bool, Double]
VALUE_TYPES = (Tensor, Int, Bool, Double)  # Union tag k names VALUE_TYPES[k - 1].


@dataclass
class Value:
    val: ValueUnion


@dataclass
class BundledMethodTestCase:
    inputs: List[Value] = field(default_factory=list)
    expected_outputs: List[Value] = field(default_factory=list)


@dataclass
class BundledMethodTestSuite:
    method_name: str
    test_cases: List[BundledMethodTestCase] = field(default_factory=list)


@dataclass
class BundledProgram:
    version: int
    method_test_suites: List[BundledMethodTestSuite] = field(default_factory=list)
    program: bytes = b""  # A complete .pte, byte for byte.
