"""ETDump bytes <-> the schema_flatcc dataclasses (upstream's function names).

serialize_to_etdump_flatcc writes with the repository's generic flatbuffer
writer; deserialize_from_etdump_flatcc reads with the checked reader, so a
truncated or corrupt .etdp raises ETDumpParseError naming the field and the
byte offset. The C++ runtime writes size-prefixed files (a u32 byte count
first, so the ED00 identifier is at offset 8); upstream's Python writer
does not (ED00 at offset 4). The reader accepts both.
"""

from __future__ import annotations

import struct
from typing import Optional

from torchlight.pte.flatbuffer_reader import FlatbufferReadError, FlatbufferReader
from torchlight.devtools.etdump.schema_flatcc import (ENUMS, FILE_IDENTIFIER, SCHEMA_PATH,
                                                      TABLES, ETDump)
from torchlight.pte.fbs_schema import FbsSchema, load_fbs
from torchlight.pte.flatbuffer_writer import FlatbufferWriter


class ETDumpParseError(FlatbufferReadError):
    """The bytes are not a readable ETDump; the message says where and why."""


def etdump_schema() -> FbsSchema:
    return load_fbs(SCHEMA_PATH)


class _ETDumpWriter(FlatbufferWriter):
    def finish_size_prefixed(self, root) -> bytes:
        offset = self._table(root, "ETDump")
        self._b.FinishSizePrefixed(offset, file_identifier=FILE_IDENTIFIER)
        return bytes(self._b.Output())


def serialize_to_etdump_flatcc(etdump: ETDump, size_prefixed: bool = False) -> bytes:
    """The ETDump as flatbuffer bytes. `size_prefixed=True` gives the C++
    runtime's layout; the default matches upstream's Python writer."""
    writer = _ETDumpWriter(etdump_schema())
    if size_prefixed:
        return writer.finish_size_prefixed(etdump)
    return writer.finish(etdump, FILE_IDENTIFIER)


def is_size_prefixed(data: bytes) -> bool:
    """Whether `data` is a size-prefixed ETDump (ED00 at 8) rather than a
    plain one (ED00 at 4). Raises ETDumpParseError when it is neither."""
    if len(data) >= 12 and data[8:12] == FILE_IDENTIFIER:
        return True
    if len(data) >= 8 and data[4:8] == FILE_IDENTIFIER:
        return False
    if len(data) < 8:
        raise ETDumpParseError(f"not an ETDump: only {len(data)} bytes, too short for a "
                               f"flatbuffer header")
    raise ETDumpParseError(f"not an ETDump: identifier {bytes(data[4:8])!r} at offset 4 and "
                           f"{bytes(data[8:12])!r} at offset 8, expected {FILE_IDENTIFIER!r} "
                           f"at one of them")


def deserialize_from_etdump_flatcc(data: bytes, size_prefixed: Optional[bool] = None) -> ETDump:
    """Parses ETDump bytes. `size_prefixed=None` finds out from where the
    ED00 identifier is. Raises ETDumpParseError for anything else."""
    data = bytes(data)
    if size_prefixed is None:
        size_prefixed = is_size_prefixed(data)
    start = 0
    end = len(data)
    if size_prefixed:
        if len(data) < 12:
            raise ETDumpParseError(f"truncated ETDump: {len(data)} bytes, a size-prefixed "
                                   f"buffer needs at least 12")
        (size,) = struct.unpack_from("<I", data, 0)
        if size > len(data) - 4:
            raise ETDumpParseError(f"truncated ETDump: the size prefix says {size} bytes follow "
                                   f"offset 4, but the file has {len(data) - 4}")
        start, end = 4, 4 + size
    if end - start < 8 or data[start + 4:start + 8] != FILE_IDENTIFIER:
        raise ETDumpParseError(f"not an ETDump: identifier {data[start + 4:start + 8]!r} at "
                               f"offset {start + 4}, expected {FILE_IDENTIFIER!r}")
    reader = FlatbufferReader(etdump_schema(), TABLES, data[:end], start, enums=ENUMS)
    try:
        return reader.read_root()
    except ETDumpParseError:
        raise
    except FlatbufferReadError as e:
        raise ETDumpParseError(f"corrupt ETDump: {e}") from None
