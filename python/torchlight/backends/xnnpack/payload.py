"""The XNNPACK delegate payload: an XH00 header, the XN01 flatbuffer and
the constant region (shared/spec/xnnpack-format.md section 1), as upstream
release 0.5 writes it.

    [0..4) zero  [4..8) "XH00"  [8..10) header length 30 (u16)
    [10..14) flatbuffer offset (u32, 32)  [14..18) flatbuffer size (u32)
    [18..22) constant offset (u32)  [22..30) constant size (u64)  [30..32) zero
    then the flatbuffer (zero-padded to 16), then the constants (each padded to 16).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import List

import flatbuffers

from torchlight.backends.xnnpack import schema

MAGIC = b"XH00"
HEADER_LENGTH = 30
HEADER_STRUCT = struct.Struct("<4s4sHIIIQ")  # padding, magic, length, fb off/size, const off/size
CONSTANT_ALIGNMENT = 16


class PayloadError(ValueError):
    """A payload that is not a well-formed XH00 + XN01 buffer."""


def _align(n: int, alignment: int = CONSTANT_ALIGNMENT) -> int:
    return (n + alignment - 1) // alignment * alignment


def pack_constants(blobs: List[bytes]) -> tuple:
    """The constant region and each blob's (offset, size): every blob starts
    16-aligned and is zero-padded to a multiple of 16."""
    region = bytearray()
    placed = []
    for blob in blobs:
        placed.append((len(region), len(blob)))
        region += blob
        region += bytes(_align(len(blob)) - len(blob))
    return bytes(region), placed


def serialize(graph, constants: bytes) -> bytes:
    """Header + `graph` (an XNNGraphT) packed with identifier XN01 + `constants`."""
    builder = flatbuffers.Builder(1024)
    builder.Finish(graph.Pack(builder), file_identifier=schema.FILE_IDENTIFIER)
    flatbuffer = bytes(builder.Output())
    fb_offset = 32
    const_offset = fb_offset + _align(len(flatbuffer))
    header = HEADER_STRUCT.pack(b"\0\0\0\0", MAGIC, HEADER_LENGTH, fb_offset, len(flatbuffer),
                                const_offset, len(constants))
    header += bytes(fb_offset - len(header))
    return header + flatbuffer + bytes(const_offset - fb_offset - len(flatbuffer)) + constants


@dataclass
class Payload:
    """A decoded payload: the header fields, the graph (object API) and the
    constant region."""

    flatbuffer_offset: int
    flatbuffer_size: int
    constant_data_offset: int
    constant_data_size: int
    identifier: bytes
    graph: object  # fb_xnnpack.XNNGraph.XNNGraphT
    constants: bytes

    def constant(self, index: int) -> bytes:
        """The valid bytes of constant_data[index] (index > 0)."""
        entry = self.graph.constantData[index]
        if entry.offset + entry.size > len(self.constants):
            raise PayloadError(f"constant_data[{index}] (offset {entry.offset}, size "
                               f"{entry.size}) lies outside the {len(self.constants)}-byte "
                               f"constant region")
        return self.constants[entry.offset:entry.offset + entry.size]


def parse(data: bytes) -> Payload:
    """Decodes a header-mode payload, checking that its regions lie inside it."""
    data = bytes(data)
    if len(data) < HEADER_LENGTH:
        raise PayloadError(f"payload of {len(data)} bytes is shorter than the 30-byte header")
    _, magic, length, fb_off, fb_size, c_off, c_size = HEADER_STRUCT.unpack_from(data)
    if magic != MAGIC:
        raise PayloadError(f"payload magic is {magic!r}, expected {MAGIC!r} (legacy headerless "
                           f"payloads are not read here)")
    if length != HEADER_LENGTH:
        raise PayloadError(f"header length is {length}, expected {HEADER_LENGTH}")
    if fb_size < 8 or fb_off + fb_size > len(data):
        raise PayloadError(f"flatbuffer [{fb_off}, +{fb_size}) is outside the {len(data)}-byte "
                           f"payload")
    if c_off < fb_off + fb_size or c_off + c_size > len(data):
        raise PayloadError(f"constant region [{c_off}, +{c_size}) overlaps the flatbuffer or "
                           f"leaves the {len(data)}-byte payload")
    flatbuffer = data[fb_off:fb_off + fb_size]
    identifier = flatbuffer[4:8]
    if identifier not in (b"XN00", b"XN01"):
        raise PayloadError(f"flatbuffer identifier is {identifier!r}, expected XN00 or XN01")
    graph = schema.table("XNNGraph").XNNGraphT.InitFromPackedBuf(flatbuffer, 0)
    return Payload(fb_off, fb_size, c_off, c_size, identifier, graph, data[c_off:c_off + c_size])
