"""The ETDump model: one dataclass per table of devtools/etdump/etdump.fbs
(the schema the C++ writer is generated from: one declaration of the format).

Fields are declared in the schema's order with its names and defaults, so
the generic flatbuffer writer and checked reader (torchlight.pte) map them
slot by slot. A field left at its default is not written, as flatcc and
flatc do. `ETDumpFlatCC` is
upstream's name for the root table.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional

from torchlight.pte.schema import ScalarType

SCHEMA_PATH = Path(__file__).resolve().parents[4] / "devtools" / "etdump" / "etdump.fbs"
FILE_IDENTIFIER = b"ED00"
# What the C++ ETDumpGen writes in ETDump.version.
ETDUMP_VERSION = 0


class ValueType(enum.IntEnum):
    Null = 0
    Int = 1
    Bool = 2
    Float = 3
    Double = 4
    Tensor = 5
    TensorList = 6
    String = 7


@dataclass
class Null:
    pass


@dataclass
class Tensor:
    scalar_type: ScalarType = ScalarType.BYTE
    sizes: List[int] = field(default_factory=list)
    strides: List[int] = field(default_factory=list)
    offset: int = 0  # Byte offset into the debug buffer; -1 for an empty tensor.


@dataclass
class Int:
    int_val: int = 0


@dataclass
class Bool:
    bool_val: bool = False


@dataclass
class Float:
    float_val: float = 0.0


@dataclass
class Double:
    double_val: float = 0.0


@dataclass
class String:
    string_val: Optional[str] = None


@dataclass
class TensorList:
    tensors: List[Tensor] = field(default_factory=list)


@dataclass
class Value:
    val: ValueType = ValueType.Null
    tensor: Optional[Tensor] = None
    tensor_list: Optional[TensorList] = None
    int_value: Optional[Int] = None
    float_value: Optional[Float] = None
    double_value: Optional[Double] = None
    bool_value: Optional[Bool] = None
    output: Optional[Bool] = None  # bool_val True: a program output.


@dataclass
class DebugEvent:
    chain_index: int = 0  # uint64: the runtime stores chain -1 as 2**64 - 1.
    instruction_id: int = -1
    debug_entry: Optional[Value] = None
    delegate_debug_id_int: int = -1
    delegate_debug_id_str: Optional[str] = None
    name: Optional[str] = None


@dataclass
class ProfileEvent:
    name: Optional[str] = None
    chain_index: int = 0
    instruction_id: int = -1
    delegate_debug_id_int: int = -1
    delegate_debug_id_str: Optional[str] = None
    delegate_debug_metadata: Optional[bytes] = None
    start_time: int = 0
    end_time: int = 0


@dataclass
class AllocationEvent:
    allocator_id: int = 0
    allocation_size: int = 0


@dataclass
class Allocator:
    name: Optional[str] = None


@dataclass
class Event:
    profile_event: Optional[ProfileEvent] = None
    allocation_event: Optional[AllocationEvent] = None
    debug_event: Optional[DebugEvent] = None


@dataclass
class RunData:
    name: Optional[str] = None
    bundled_input_index: int = -1
    allocators: Optional[List[Allocator]] = None  # Absent when none were registered.
    events: List[Event] = field(default_factory=list)


@dataclass
class ETDump:
    version: int = ETDUMP_VERSION
    run_data: List[RunData] = field(default_factory=list)


ETDumpFlatCC = ETDump  # upstream's name

# Table name -> dataclass, for the reader.
TABLES = {cls.__name__: cls for cls in (Null, Tensor, Int, Bool, Float, Double, String,
                                        TensorList, Value, DebugEvent, ProfileEvent,
                                        AllocationEvent, Allocator, Event, RunData, ETDump)}
ENUMS = {"ScalarType": ScalarType, "ValueType": ValueType}
