"""The .pte file: flatbuffer, extended header, and segments (spec section 1).

Writing: `serialize_pte` places the raw bytes an emitted program refers to
(constants, initial values of mutable buffers, delegate blobs) into aligned
segments or inline tables, then writes the flatbuffer and the `eh00` header.
Reading: `read_pte` parses a file back into schema.py objects plus helpers
to reach segment bytes, for inspection and tests.
"""

from __future__ import annotations

import copy
import dataclasses
import struct
import typing
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np

from torchlight.pte import codegen, schema
from torchlight.pte.flatbuffer_writer import FILE_IDENTIFIER, FORCE_ALIGN, write_flatbuffer

HEADER_MAGIC = b"eh00"
HEADER_LENGTH = 32


def align_up(value: int, alignment: int) -> int:
    return (value + alignment - 1) // alignment * alignment


@dataclass
class ProgramData:
    """An emitted program before its data is placed.

    `program` refers to constants by data_buffer_idx (into `constants`), to
    initial values of mutable buffers by data_buffer_idx (into
    `mutable_data`), and to delegate blobs by BackendDelegate.processed.index
    (into `delegate_blobs`). Entry 0 of `constants` and of `mutable_data` is
    reserved and empty, as in the format. `named_data` holds blobs a backend
    looks up by key at init (Program.named_data, one segment each), as
    upstream's newer XNNPACK payloads keep their constants.
    """

    program: schema.Program
    constants: List[bytes] = field(default_factory=lambda: [b""])
    mutable_data: List[bytes] = field(default_factory=lambda: [b""])
    delegate_blobs: List[bytes] = field(default_factory=list)
    named_data: Dict[str, bytes] = field(default_factory=dict)


@dataclass
class SerializeConfig:
    # Alignment of each segment in the file; 4096 makes segments mmap-able.
    segment_alignment: int = 128
    # Alignment of each tensor inside the constant and mutable segments.
    constant_tensor_alignment: int = 16
    # Constants in a segment (True) or in the legacy inline constant_buffer.
    extract_constants: bool = True
    # Delegate blobs in segments (True) or inline in backend_delegate_data.
    extract_delegate_segments: bool = True
    # Write the eh00 header (required whenever there are segments).
    extended_header: bool = True


def _check_alignment(name: str, value: int) -> None:
    if value <= 0 or value & (value - 1):
        raise ValueError(f"{name} must be a power of two, got {value}")


def _pack_subsegments(buffers: List[bytes], alignment: int):
    """One blob holding buffers[1:], each `alignment`-aligned; offsets[0] is reserved (0)."""
    offsets = [0]
    cursor = 0
    for buf in buffers[1:]:
        cursor = align_up(cursor, alignment)
        offsets.append(cursor)
        cursor += len(buf)
    blob = bytearray(cursor)
    for offset, buf in zip(offsets[1:], buffers[1:]):
        blob[offset:offset + len(buf)] = buf
    return bytes(blob), offsets


def serialize_pte(data: ProgramData, config: Optional[SerializeConfig] = None) -> bytes:
    """The complete .pte file for `data`.

    Raises ValueError for a bad alignment, or for segments without the
    extended header (a reader could not find them).
    """
    config = config or SerializeConfig()
    _check_alignment("segment_alignment", config.segment_alignment)
    _check_alignment("constant_tensor_alignment", config.constant_tensor_alignment)
    program = copy.deepcopy(data.program)
    segments: List[bytes] = []

    def add_segment(blob: bytes) -> int:
        segments.append(blob)
        return len(segments) - 1

    program.constant_buffer = []
    program.constant_segment = schema.SubsegmentOffsets(0, [])
    if len(data.constants) > 1:
        if config.extract_constants:
            blob, offsets = _pack_subsegments(data.constants, config.constant_tensor_alignment)
            program.constant_segment = schema.SubsegmentOffsets(add_segment(blob), offsets)
        else:
            program.constant_buffer = [schema.Buffer(bytes(c)) for c in data.constants]

    if len(data.mutable_data) > 1:
        blob, offsets = _pack_subsegments(data.mutable_data, config.constant_tensor_alignment)
        program.mutable_data_segments = [schema.SubsegmentOffsets(add_segment(blob), offsets)]

    # Each distinct blob is stored once, however many delegates use it.
    placed: Dict[int, int] = {}
    program.backend_delegate_data = []
    for plan in program.execution_plan:
        for delegate in plan.delegates:
            blob_index = delegate.processed.index
            if blob_index not in placed:
                blob = data.delegate_blobs[blob_index]
                if config.extract_delegate_segments:
                    placed[blob_index] = add_segment(blob)
                else:
                    program.backend_delegate_data.append(schema.BackendDelegateInlineData(blob))
                    placed[blob_index] = len(program.backend_delegate_data) - 1
            location = (schema.DataLocation.SEGMENT if config.extract_delegate_segments
                        else schema.DataLocation.INLINE)
            delegate.processed = schema.BackendDelegateDataReference(location, placed[blob_index])

    if data.named_data:
        program.named_data = [schema.NamedData(key, add_segment(bytes(blob)))
                              for key, blob in data.named_data.items()]

    cursor = 0
    program.segments = []
    for blob in segments:
        cursor = align_up(cursor, config.segment_alignment)
        program.segments.append(schema.DataSegment(cursor, len(blob)))
        cursor += len(blob)
    segment_data_size = cursor

    flatbuffer = write_flatbuffer(program)
    if not config.extended_header:
        if segments:
            raise ValueError("the program has segments (constants, mutable data or delegates), "
                             "which need the extended header; set extended_header=True or "
                             "extract_constants=False and extract_delegate_segments=False")
        return flatbuffer

    program_size = len(flatbuffer) + HEADER_LENGTH
    base = align_up(program_size, config.segment_alignment) if segments else 0
    header = (HEADER_MAGIC + struct.pack("<I", HEADER_LENGTH) +
              struct.pack("<QQQ", program_size, base, segment_data_size))
    assert HEADER_LENGTH % FORCE_ALIGN == 0  # Keeps the flatbuffer's alignment.
    (root,) = struct.unpack_from("<I", flatbuffer, 0)
    out = bytearray(struct.pack("<I", root + HEADER_LENGTH) + flatbuffer[4:8] + header +
                    flatbuffer[8:])
    for segment, blob in zip(program.segments, segments):
        out.extend(bytes(base + segment.offset - len(out)))
        out.extend(blob)
    return bytes(out)


# --- Reading -------------------------------------------------------------------


@dataclass
class ExtendedHeader:
    program_size: int
    segment_base_offset: int
    segment_data_size: Optional[int]  # None for a 24-byte (release 0.5) header.
    length: int = HEADER_LENGTH


@dataclass
class PteFile:
    """A parsed .pte: the program tables, the header, and the raw file bytes."""

    program: schema.Program
    header: Optional[ExtendedHeader]
    data: bytes

    def segment_bytes(self, index: int) -> bytes:
        if self.header is None:
            raise ValueError("the file has no extended header, so its segments cannot be located")
        segment = self.program.segments[index]
        start = self.header.segment_base_offset + segment.offset
        return self.data[start:start + segment.size]

    def constant_bytes(self, buffer_index: int, nbytes: int) -> bytes:
        """Bytes of constant `buffer_index` (a Tensor's data_buffer_idx)."""
        if self.program.constant_buffer:
            return bytes(self.program.constant_buffer[buffer_index].storage)[:nbytes]
        cs = self.program.constant_segment
        offset = cs.offsets[buffer_index]
        return self.segment_bytes(cs.segment_index)[offset:offset + nbytes]

    def mutable_bytes(self, buffer_index: int, nbytes: int, list_index: int = 0) -> bytes:
        lst = self.program.mutable_data_segments[list_index]
        offset = lst.offsets[buffer_index]
        return self.segment_bytes(lst.segment_index)[offset:offset + nbytes]

    def named_data_bytes(self, key: str) -> bytes:
        """The blob stored under `key` in Program.named_data (KeyError if none)."""
        for entry in self.program.named_data:
            if entry.key == key:
                return self.segment_bytes(entry.segment_index)
        raise KeyError(f"the program has no named data '{key}'")

    def delegate_bytes(self, reference: schema.BackendDelegateDataReference) -> bytes:
        if reference.location == schema.DataLocation.INLINE:
            return bytes(self.program.backend_delegate_data[reference.index].data)
        return self.segment_bytes(reference.index)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


_BYTES_FIELDS = {(schema.Buffer, "storage"), (schema.BackendDelegateInlineData, "data"),
                 (schema.CompileSpec, "value")}
_UNIONS = {(schema.EValue, "val"): ("valType", schema.KERNEL_TYPES),
           (schema.Instruction, "instr_args"): ("instrArgsType", schema.INSTRUCTION_TYPES)}


def _convert(value, hint):
    """An object-API value (flatc --gen-object-api) as the type `hint`."""
    origin = typing.get_origin(hint)
    if origin is typing.Union:  # Optional[X]
        if value is None:
            return None
        (inner,) = [a for a in typing.get_args(hint) if a is not type(None)]
        return _convert(value, inner)
    if origin in (list, List):
        (inner,) = typing.get_args(hint)
        if value is None:
            return []
        if isinstance(value, np.ndarray):
            value = value.tolist()
        return [_convert(v, inner) for v in value]
    if dataclasses.is_dataclass(hint):
        return _from_object(hint, value)
    if isinstance(hint, type) and issubclass(hint, int) and hint is not bool:
        return hint(int(value)) if value is not None else hint(0)
    if hint is str:
        return value.decode() if isinstance(value, bytes) else value
    if hint is bool:
        return bool(value)
    if hint is float:
        return float(value)
    return value


def _from_object(cls, obj):
    if obj is None:
        return None
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for f in dataclasses.fields(cls):
        raw = getattr(obj, _camel(f.name))
        if (cls, f.name) in _BYTES_FIELDS:
            kwargs[f.name] = b"" if raw is None else bytes(np.asarray(raw, dtype=np.uint8))
        elif (cls, f.name) in _UNIONS:
            type_attr, members = _UNIONS[(cls, f.name)]
            member = members[getattr(obj, type_attr) - 1]
            kwargs[f.name] = _from_object(member, raw) if raw is not None else member()
        else:
            kwargs[f.name] = _convert(raw, hints[f.name])
    return cls(**kwargs)


def read_header(data: bytes) -> Optional[ExtendedHeader]:
    """The eh00 header of a .pte, or None when the file has none."""
    if data[8:12] != HEADER_MAGIC:
        return None
    (length,) = struct.unpack_from("<I", data, 12)
    if length < 24:
        raise ValueError(f"extended header length {length} is invalid (at least 24)")
    program_size, base = struct.unpack_from("<QQ", data, 16)
    # Release 0.5 writes 24-byte headers without segment_data_size.
    seg_size = struct.unpack_from("<Q", data, 32)[0] if length >= 32 else None
    return ExtendedHeader(program_size, base, seg_size, length)


def read_pte(data: bytes) -> PteFile:
    """Parses a .pte file. Raises ValueError when it is not an ET12 program."""
    data = bytes(data)
    if len(data) < 8 or data[4:8] != FILE_IDENTIFIER:
        raise ValueError(f"not a .pte program: identifier {data[4:8]!r}, expected "
                         f"{FILE_IDENTIFIER!r}")
    program_t = codegen.table("Program").ProgramT.InitFromPackedBuf(data, 0)
    return PteFile(_from_object(schema.Program, program_t), read_header(data), data)
