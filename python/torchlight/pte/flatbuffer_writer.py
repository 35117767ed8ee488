"""Program (schema.py objects) -> flatbuffer bytes, with flatc's generated builders.

The result is a plain ET12 flatbuffer: no extended header, no segments
(pte_file.py adds those). Vectors marked `force_align: 16` in the schema are
16-byte aligned here by hand, because flatc's Python generator ignores that
attribute.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

import flatbuffers
import numpy as np

from torchlight.pte import codegen, schema

FILE_IDENTIFIER = b"ET12"
FORCE_ALIGN = 16


class _Writer:
    def __init__(self) -> None:
        self.b = flatbuffers.Builder(4096)
        self.t = {name: codegen.table(name) for name in (
            "ContainerMetadata", "Null", "AllocationDetails", "ExtraTensorInfo", "Tensor", "Int",
            "Bool", "Double", "String", "IntList", "DoubleList", "BoolList", "TensorList",
            "OptionalTensorList", "EValue", "Operator", "KernelCall", "DelegateCall", "MoveCall",
            "JumpFalseCall", "FreeCall", "Instruction", "Frame", "FrameList",
            "BackendDelegateDataReference", "CompileSpec", "BackendDelegate", "Chain",
            "NonConstBufferDevice", "ExecutionPlan", "Buffer", "BackendDelegateInlineData",
            "DataSegment", "SubsegmentOffsets", "NamedData", "Program")}

    # --- Vectors and strings -------------------------------------------------

    def string(self, s: Optional[str]) -> Optional[int]:
        return None if s is None else self.b.CreateString(s)

    def numbers(self, items: Sequence, dtype) -> int:
        return self.b.CreateNumpyVector(np.asarray(items, dtype=dtype).reshape(-1))

    def aligned_bytes(self, data: bytes, alignment: int = FORCE_ALIGN) -> int:
        """A [ubyte] vector whose first element is `alignment`-aligned."""
        self.b.StartVector(1, len(data), alignment)
        self.b.head = self.b.head - len(data)
        self.b.Bytes[self.b.head:self.b.head + len(data)] = data
        return self.b.EndVector()

    def tables(self, items: Sequence, write: Callable) -> int:
        offsets = [write(item) for item in items]
        self.b.StartVector(4, len(offsets), 4)
        for offset in reversed(offsets):
            self.b.PrependUOffsetTRelative(offset)
        return self.b.EndVector()

    # --- Tables ----------------------------------------------------------------

    def container_metadata(self, m: schema.ContainerMetadata) -> int:
        t = self.t["ContainerMetadata"]
        inp, out = self.string(m.encoded_inp_str), self.string(m.encoded_out_str)
        t.Start(self.b)
        t.AddEncodedInpStr(self.b, inp)
        t.AddEncodedOutStr(self.b, out)
        return t.End(self.b)

    def allocation(self, a: schema.AllocationDetails) -> int:
        t = self.t["AllocationDetails"]
        t.Start(self.b)
        t.AddMemoryId(self.b, a.memory_id)
        t.AddMemoryOffsetLow(self.b, a.memory_offset_low)
        t.AddMemoryOffsetHigh(self.b, a.memory_offset_high)
        return t.End(self.b)

    def extra_tensor_info(self, e: schema.ExtraTensorInfo) -> int:
        t = self.t["ExtraTensorInfo"]
        fqn = self.string(e.fully_qualified_name)
        t.Start(self.b)
        t.AddMutableDataSegmentsIdx(self.b, e.mutable_data_segments_idx)
        if fqn is not None:
            t.AddFullyQualifiedName(self.b, fqn)
        t.AddLocation(self.b, int(e.location))
        t.AddDeviceType(self.b, int(e.device_type))
        t.AddDeviceIndex(self.b, e.device_index)
        return t.End(self.b)

    def tensor(self, x: schema.Tensor) -> int:
        t = self.t["Tensor"]
        sizes = self.numbers(x.sizes, np.int32)
        dim_order = self.numbers(x.dim_order, np.uint8)
        allocation = None if x.allocation_info is None else self.allocation(x.allocation_info)
        extra = None if x.extra_tensor_info is None else self.extra_tensor_info(x.extra_tensor_info)
        t.Start(self.b)
        t.AddScalarType(self.b, int(x.scalar_type))
        t.AddStorageOffset(self.b, x.storage_offset)
        t.AddSizes(self.b, sizes)
        t.AddDimOrder(self.b, dim_order)
        t.AddRequiresGrad(self.b, x.requires_grad)
        t.AddDataBufferIdx(self.b, x.data_buffer_idx)
        if allocation is not None:
            t.AddAllocationInfo(self.b, allocation)
        t.AddLayout(self.b, x.layout)
        t.AddShapeDynamism(self.b, int(x.shape_dynamism))
        if extra is not None:
            t.AddExtraTensorInfo(self.b, extra)
        return t.End(self.b)

    def _list(self, name: str, items: int) -> int:
        t = self.t[name]
        t.Start(self.b)
        t.AddItems(self.b, items)
        return t.End(self.b)

    def kernel_value(self, v) -> int:
        b = self.b
        if isinstance(v, schema.Null):
            self.t["Null"].Start(b)
            return self.t["Null"].End(b)
        if isinstance(v, schema.Int):
            self.t["Int"].Start(b)
            self.t["Int"].AddIntVal(b, v.int_val)
            return self.t["Int"].End(b)
        if isinstance(v, schema.Bool):
            self.t["Bool"].Start(b)
            self.t["Bool"].AddBoolVal(b, v.bool_val)
            return self.t["Bool"].End(b)
        if isinstance(v, schema.Double):
            self.t["Double"].Start(b)
            self.t["Double"].AddDoubleVal(b, v.double_val)
            return self.t["Double"].End(b)
        if isinstance(v, schema.Tensor):
            return self.tensor(v)
        if isinstance(v, schema.String):
            s = self.string(v.string_val)
            self.t["String"].Start(b)
            self.t["String"].AddStringVal(b, s)
            return self.t["String"].End(b)
        if isinstance(v, schema.IntList):
            return self._list("IntList", self.numbers(v.items, np.int64))
        if isinstance(v, schema.DoubleList):
            return self._list("DoubleList", self.numbers(v.items, np.float64))
        if isinstance(v, schema.BoolList):
            return self._list("BoolList", self.numbers(v.items, np.bool_))
        if isinstance(v, schema.TensorList):
            return self._list("TensorList", self.numbers(v.items, np.int32))
        if isinstance(v, schema.OptionalTensorList):
            return self._list("OptionalTensorList", self.numbers(v.items, np.int32))
        raise TypeError(f"not a KernelTypes member: {v!r}")

    def evalue(self, v: schema.EValue) -> int:
        t = self.t["EValue"]
        val = self.kernel_value(v.val)
        t.Start(self.b)
        t.AddValType(self.b, schema.KERNEL_TYPES.index(type(v.val)) + 1)
        t.AddVal(self.b, val)
        return t.End(self.b)

    def operator(self, op: schema.Operator) -> int:
        t = self.t["Operator"]
        name, overload = self.string(op.name), self.string(op.overload)
        t.Start(self.b)
        t.AddName(self.b, name)
        t.AddOverload(self.b, overload)
        return t.End(self.b)

    def instruction_args(self, a) -> int:
        b = self.b
        if isinstance(a, (schema.KernelCall, schema.DelegateCall)):
            t = self.t[type(a).__name__]
            args = self.numbers(a.args, np.int32)
            t.Start(b)
            if isinstance(a, schema.KernelCall):
                t.AddOpIndex(b, a.op_index)
            else:
                t.AddDelegateIndex(b, a.delegate_index)
            t.AddArgs(b, args)
            return t.End(b)
        if isinstance(a, schema.MoveCall):
            t = self.t["MoveCall"]
            t.Start(b)
            t.AddMoveFrom(b, a.move_from)
            t.AddMoveTo(b, a.move_to)
            return t.End(b)
        if isinstance(a, schema.JumpFalseCall):
            t = self.t["JumpFalseCall"]
            t.Start(b)
            t.AddCondValueIndex(b, a.cond_value_index)
            t.AddDestinationInstruction(b, a.destination_instruction)
            return t.End(b)
        if isinstance(a, schema.FreeCall):
            t = self.t["FreeCall"]
            t.Start(b)
            t.AddValueIndex(b, a.value_index)
            return t.End(b)
        raise TypeError(f"not an InstructionArguments member: {a!r}")

    def instruction(self, i: schema.Instruction) -> int:
        t = self.t["Instruction"]
        args = self.instruction_args(i.instr_args)
        t.Start(self.b)
        t.AddInstrArgsType(self.b, schema.INSTRUCTION_TYPES.index(type(i.instr_args)) + 1)
        t.AddInstrArgs(self.b, args)
        return t.End(self.b)

    def frame(self, f: schema.Frame) -> int:
        t = self.t["Frame"]
        filename, name, context = self.string(f.filename), self.string(f.name), self.string(f.context)
        t.Start(self.b)
        t.AddFilename(self.b, filename)
        t.AddLineno(self.b, f.lineno)
        t.AddName(self.b, name)
        t.AddContext(self.b, context)
        return t.End(self.b)

    def frame_list(self, fl: schema.FrameList) -> int:
        return self._list("FrameList", self.tables(fl.items, self.frame))

    def chain(self, c: schema.Chain) -> int:
        t = self.t["Chain"]
        inputs = self.numbers(c.inputs, np.int32)
        outputs = self.numbers(c.outputs, np.int32)
        instructions = self.tables(c.instructions, self.instruction)
        stacktrace = None if c.stacktrace is None else self.tables(c.stacktrace, self.frame_list)
        t.Start(self.b)
        t.AddInputs(self.b, inputs)
        t.AddOutputs(self.b, outputs)
        t.AddInstructions(self.b, instructions)
        if stacktrace is not None:
            t.AddStacktrace(self.b, stacktrace)
        return t.End(self.b)

    def compile_spec(self, s: schema.CompileSpec) -> int:
        t = self.t["CompileSpec"]
        key = self.string(s.key)
        value = self.numbers(np.frombuffer(bytes(s.value), dtype=np.uint8), np.uint8)
        t.Start(self.b)
        t.AddKey(self.b, key)
        t.AddValue(self.b, value)
        return t.End(self.b)

    def data_reference(self, r: schema.BackendDelegateDataReference) -> int:
        t = self.t["BackendDelegateDataReference"]
        t.Start(self.b)
        t.AddLocation(self.b, int(r.location))
        t.AddIndex(self.b, r.index)
        return t.End(self.b)

    def delegate(self, d: schema.BackendDelegate) -> int:
        t = self.t["BackendDelegate"]
        backend_id = self.string(d.id)
        processed = self.data_reference(d.processed)
        specs = self.tables(d.compile_specs, self.compile_spec)
        t.Start(self.b)
        t.AddId(self.b, backend_id)
        t.AddProcessed(self.b, processed)
        t.AddCompileSpecs(self.b, specs)
        return t.End(self.b)

    def buffer_device(self, d: schema.NonConstBufferDevice) -> int:
        t = self.t["NonConstBufferDevice"]
        t.Start(self.b)
        t.AddBufferIdx(self.b, d.buffer_idx)
        t.AddDeviceType(self.b, int(d.device_type))
        t.AddDeviceIndex(self.b, d.device_index)
        return t.End(self.b)

    def plan(self, p: schema.ExecutionPlan) -> int:
        t = self.t["ExecutionPlan"]
        name = self.string(p.name)
        meta = self.container_metadata(p.container_meta_type)
        values = self.tables(p.values, self.evalue)
        inputs = self.numbers(p.inputs, np.int32)
        outputs = self.numbers(p.outputs, np.int32)
        chains = self.tables(p.chains, self.chain)
        operators = self.tables(p.operators, self.operator)
        delegates = self.tables(p.delegates, self.delegate)
        sizes = self.numbers(p.non_const_buffer_sizes, np.int64)
        devices = (None if p.non_const_buffer_device is None
                   else self.tables(p.non_const_buffer_device, self.buffer_device))
        t.Start(self.b)
        t.AddName(self.b, name)
        t.AddContainerMetaType(self.b, meta)
        t.AddValues(self.b, values)
        t.AddInputs(self.b, inputs)
        t.AddOutputs(self.b, outputs)
        t.AddChains(self.b, chains)
        t.AddOperators(self.b, operators)
        t.AddDelegates(self.b, delegates)
        t.AddNonConstBufferSizes(self.b, sizes)
        if devices is not None:
            t.AddNonConstBufferDevice(self.b, devices)
        return t.End(self.b)

    def buffer(self, buf: schema.Buffer) -> int:
        storage = self.aligned_bytes(bytes(buf.storage))
        t = self.t["Buffer"]
        t.Start(self.b)
        t.AddStorage(self.b, storage)
        return t.End(self.b)

    def inline_data(self, d: schema.BackendDelegateInlineData) -> int:
        data = self.aligned_bytes(bytes(d.data))
        t = self.t["BackendDelegateInlineData"]
        t.Start(self.b)
        t.AddData(self.b, data)
        return t.End(self.b)

    def segment(self, s: schema.DataSegment) -> int:
        t = self.t["DataSegment"]
        t.Start(self.b)
        t.AddOffset(self.b, s.offset)
        t.AddSize(self.b, s.size)
        return t.End(self.b)

    def subsegment_offsets(self, s: schema.SubsegmentOffsets) -> int:
        t = self.t["SubsegmentOffsets"]
        offsets = self.numbers(s.offsets, np.uint64)
        t.Start(self.b)
        t.AddSegmentIndex(self.b, s.segment_index)
        t.AddOffsets(self.b, offsets)
        return t.End(self.b)

    def named_data(self, n: schema.NamedData) -> int:
        t = self.t["NamedData"]
        key = self.string(n.key)
        t.Start(self.b)
        t.AddKey(self.b, key)
        t.AddSegmentIndex(self.b, n.segment_index)
        return t.End(self.b)

    def program(self, p: schema.Program) -> bytes:
        t = self.t["Program"]
        plans = self.tables(p.execution_plan, self.plan)
        constant_buffer = self.tables(p.constant_buffer, self.buffer)
        delegate_data = self.tables(p.backend_delegate_data, self.inline_data)
        segments = self.tables(p.segments, self.segment)
        constant_segment = self.subsegment_offsets(p.constant_segment)
        mutable = (None if p.mutable_data_segments is None
                   else self.tables(p.mutable_data_segments, self.subsegment_offsets))
        named = None if p.named_data is None else self.tables(p.named_data, self.named_data)
        t.Start(self.b)
        t.AddVersion(self.b, p.version)
        t.AddExecutionPlan(self.b, plans)
        t.AddConstantBuffer(self.b, constant_buffer)
        t.AddBackendDelegateData(self.b, delegate_data)
        t.AddSegments(self.b, segments)
        t.AddConstantSegment(self.b, constant_segment)
        if mutable is not None:
            t.AddMutableDataSegments(self.b, mutable)
        if named is not None:
            t.AddNamedData(self.b, named)
        root = t.End(self.b)
        self.b.Finish(root, file_identifier=FILE_IDENTIFIER)
        return bytes(self.b.Output())


def write_flatbuffer(program: schema.Program) -> bytes:
    """The program as an ET12 flatbuffer (no extended header, no segments)."""
    return _Writer().program(program)

