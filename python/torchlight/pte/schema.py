"""The .pte program model: one Python class per table of schema/program.fbs.

Fields are declared in the schema's order with its (snake_case) names, so a
reader can hold this file next to the spec's table. The emitter builds these
objects; flatbuffer_writer.py turns them into flatbuffer bytes and
pte_file.py turns bytes back into them. Defaults match the schema's
defaults, so a field left at its default is simply not written (as flatc
would do).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import List, Optional, Union


class ScalarType(enum.IntEnum):
    BYTE = 0
    CHAR = 1
    SHORT = 2
    INT = 3
    LONG = 4
    HALF = 5
    FLOAT = 6
    DOUBLE = 7
    BOOL = 11
    QINT8 = 12
    QUINT8 = 13
    QINT32 = 14
    BFLOAT16 = 15
    QUINT4X2 = 16
    QUINT2X4 = 17
    BITS16 = 22
    FLOAT8E5M2 = 23
    FLOAT8E4M3FN = 24
    FLOAT8E5M2FNUZ = 25
    FLOAT8E4M3FNUZ = 26
    UINT16 = 27
    UINT32 = 28
    UINT64 = 29


class TensorShapeDynamism(enum.IntEnum):
    STATIC = 0
    DYNAMIC_BOUND = 1
    DYNAMIC_UNBOUND = 2


class TensorDataLocation(enum.IntEnum):
    SEGMENT = 0
    EXTERNAL = 1


class DeviceType(enum.IntEnum):
    CPU = 0
    CUDA = 1


class DataLocation(enum.IntEnum):
    INLINE = 0
    SEGMENT = 1


@dataclass
class ContainerMetadata:
    encoded_inp_str: str = ""
    encoded_out_str: str = ""


@dataclass
class AllocationDetails:
    """Arena `memory_id - 1`, at byte memory_offset_low | (memory_offset_high << 32)."""

    memory_id: int = 0
    memory_offset_low: int = 0
    memory_offset_high: int = 0

    @property
    def offset(self) -> int:
        return self.memory_offset_low | (self.memory_offset_high << 32)

    @staticmethod
    def at(memory_id: int, offset: int) -> "AllocationDetails":
        return AllocationDetails(memory_id, offset & 0xFFFFFFFF, offset >> 32)


@dataclass
class ExtraTensorInfo:
    mutable_data_segments_idx: int = 0
    fully_qualified_name: Optional[str] = None
    location: TensorDataLocation = TensorDataLocation.SEGMENT
    device_type: DeviceType = DeviceType.CPU
    device_index: int = 0


@dataclass
class Tensor:
    scalar_type: ScalarType
    storage_offset: int = 0
    sizes: List[int] = field(default_factory=list)
    dim_order: List[int] = field(default_factory=list)
    requires_grad: bool = False
    data_buffer_idx: int = 0
    allocation_info: Optional[AllocationDetails] = None
    layout: int = 0
    shape_dynamism: TensorShapeDynamism = TensorShapeDynamism.STATIC
    extra_tensor_info: Optional[ExtraTensorInfo] = None


@dataclass
class Null:
    pass


@dataclass
class Int:
    int_val: int = 0


@dataclass
class Bool:
    bool_val: bool = False


@dataclass
class Double:
    double_val: float = 0.0


@dataclass
class String:
    string_val: str = ""


@dataclass
class IntList:
    """Indices of Int values (boxed, so a symbolic size updates every list)."""

    items: List[int] = field(default_factory=list)


@dataclass
class DoubleList:
    items: List[float] = field(default_factory=list)


@dataclass
class BoolList:
    items: List[bool] = field(default_factory=list)


@dataclass
class TensorList:
    """Indices of Tensor values."""

    items: List[int] = field(default_factory=list)


@dataclass
class OptionalTensorList:
    """Indices of Tensor values; -1 stands for None."""

    items: List[int] = field(default_factory=list)


KernelTypes = Union[Null, Int, Bool, Double, Tensor, String, IntList, DoubleList, BoolList,
                    TensorList, OptionalTensorList]

# Union member order of `union KernelTypes`; the type tag is index + 1.
KERNEL_TYPES = (Null, Int, Bool, Double, Tensor, String, IntList, DoubleList, BoolList, TensorList,
                OptionalTensorList)


@dataclass
class EValue:
    val: KernelTypes


@dataclass
class Operator:
    name: str
    overload: str = ""

    @property
    def qualified_name(self) -> str:
        """"aten::add.out": the name kernels are registered under."""
        return f"{self.name}.{self.overload}" if self.overload else self.name


@dataclass
class KernelCall:
    op_index: int
    args: List[int] = field(default_factory=list)


@dataclass
class DelegateCall:
    delegate_index: int
    args: List[int] = field(default_factory=list)


@dataclass
class MoveCall:
    move_from: int
    move_to: int


@dataclass
class JumpFalseCall:
    cond_value_index: int
    destination_instruction: int


@dataclass
class FreeCall:
    value_index: int


InstructionArguments = Union[KernelCall, DelegateCall, MoveCall, JumpFalseCall, FreeCall]
INSTRUCTION_TYPES = (KernelCall, DelegateCall, MoveCall, JumpFalseCall, FreeCall)


@dataclass
class Instruction:
    instr_args: InstructionArguments


@dataclass
class Frame:
    filename: str = ""
    lineno: int = 0
    name: str = ""
    context: str = ""


@dataclass
class FrameList:
    items: List[Frame] = field(default_factory=list)


@dataclass
class BackendDelegateDataReference:
    location: DataLocation
    index: int


@dataclass
class CompileSpec:
    key: str
    value: bytes = b""


@dataclass
class BackendDelegate:
    id: str
    processed: BackendDelegateDataReference
    compile_specs: List[CompileSpec] = field(default_factory=list)


@dataclass
class Chain:
    inputs: List[int] = field(default_factory=list)
    outputs: List[int] = field(default_factory=list)
    instructions: List[Instruction] = field(default_factory=list)
    stacktrace: Optional[List[FrameList]] = None


@dataclass
class NonConstBufferDevice:
    buffer_idx: int = 0
    device_type: DeviceType = DeviceType.CPU
    device_index: int = 0


@dataclass
class ExecutionPlan:
    name: str
    container_meta_type: ContainerMetadata = field(default_factory=ContainerMetadata)
    values: List[EValue] = field(default_factory=list)
    inputs: List[int] = field(default_factory=list)
    outputs: List[int] = field(default_factory=list)
    chains: List[Chain] = field(default_factory=list)
    operators: List[Operator] = field(default_factory=list)
    delegates: List[BackendDelegate] = field(default_factory=list)
    # Entry 0 is reserved; entry k is the size of arena k (memory_id k).
    non_const_buffer_sizes: List[int] = field(default_factory=lambda: [0])
    non_const_buffer_device: Optional[List[NonConstBufferDevice]] = None


@dataclass
class Buffer:
    storage: bytes = b""


@dataclass
class BackendDelegateInlineData:
    data: bytes = b""


@dataclass
class DataSegment:
    offset: int = 0
    size: int = 0


@dataclass
class SubsegmentOffsets:
    segment_index: int = 0
    offsets: List[int] = field(default_factory=list)


@dataclass
class NamedData:
    key: str
    segment_index: int = 0


@dataclass
class Program:
    version: int = 0
    execution_plan: List[ExecutionPlan] = field(default_factory=list)
    constant_buffer: List[Buffer] = field(default_factory=list)
    backend_delegate_data: List[BackendDelegateInlineData] = field(default_factory=list)
    segments: List[DataSegment] = field(default_factory=list)
    constant_segment: SubsegmentOffsets = field(default_factory=SubsegmentOffsets)
    mutable_data_segments: Optional[List[SubsegmentOffsets]] = None
    named_data: Optional[List[NamedData]] = None

    def plan(self, name: str) -> ExecutionPlan:
        """The execution plan (method) called `name`. Raises KeyError."""
        for plan in self.execution_plan:
            if plan.name == name:
                return plan
        raise KeyError(f"the program has no method '{name}' (it has "
                       f"{', '.join(p.name for p in self.execution_plan) or 'none'})")
