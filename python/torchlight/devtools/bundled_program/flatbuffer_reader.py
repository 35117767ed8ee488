"""Flatbuffer bytes -> dataclass objects, generically, from the .fbs schema:
the reading half of torchlight.pte.flatbuffer_writer.

Each table becomes the dataclass of the same name from a given module, its
fields read by slot with the schema's wire types and defaults. Every offset
and length is checked against the buffer before it is followed, so a
truncated or corrupt file raises FlatbufferReadError naming the field, not
IndexError or a wrong value. A vector of ubyte comes back as bytes when
its dataclass field is annotated `bytes`, else as a list.
"""

from __future__ import annotations

import functools
import struct
import types
import typing
from typing import Any, Dict

import numpy as np

from torchlight.pte.fbs_schema import FbsSchema, TypeRef

# Tables nest no deeper than this; a schema with recursion could otherwise
# be made to loop by a crafted file.
_MAX_DEPTH = 64


@functools.lru_cache(maxsize=None)
def _type_hints(cls) -> Dict[str, Any]:
    return typing.get_type_hints(cls)


class FlatbufferReadError(ValueError):
    """The bytes are not a valid buffer of the schema; the message says where."""


class FlatbufferReader:
    def __init__(self, fbs: FbsSchema, classes: types.ModuleType, data: bytes) -> None:
        self._fbs = fbs
        self._classes = classes
        self._data = memoryview(bytes(data))
        self._enum_types: Dict[str, Any] = {}

    def read_root(self, file_identifier: bytes = b"") -> Any:
        data = self._data
        if len(data) < 8:
            raise FlatbufferReadError(f"the buffer is {len(data)} bytes, too short for a "
                                      f"flatbuffer (at least 8)")
        if file_identifier and bytes(data[4:8]) != file_identifier:
            raise FlatbufferReadError(f"file identifier is {bytes(data[4:8])!r}, expected "
                                      f"{file_identifier!r}")
        return self._table(self._offset(0, "root"), self._fbs.root_type, "root", 0)

    # --- Bounds-checked primitives -------------------------------------------

    def _unpack(self, fmt: str, pos: int, where: str):
        size = struct.calcsize(fmt)
        if pos < 0 or pos + size > len(self._data):
            raise FlatbufferReadError(f"{where}: reads {size} bytes at offset {pos}, past the "
                                      f"end of the {len(self._data)}-byte buffer")
        return struct.unpack_from(fmt, self._data, pos)[0]

    def _offset(self, pos: int, where: str) -> int:
        """The position a uoffset stored at `pos` points to."""
        return pos + self._unpack("<I", pos, where)

    def _span(self, pos: int, count: int, size: int, where: str) -> int:
        """Checks that `count` elements of `size` bytes fit at `pos`; returns pos."""
        if pos + count * size > len(self._data):
            raise FlatbufferReadError(f"{where}: {count} elements of {size} bytes at offset "
                                      f"{pos} run past the end of the {len(self._data)}-byte "
                                      f"buffer")
        return pos

    # --- Tables --------------------------------------------------------------

    def _table(self, pos: int, name: str, where: str, depth: int) -> Any:
        if depth > _MAX_DEPTH:
            raise FlatbufferReadError(f"{where}: tables nest deeper than {_MAX_DEPTH}")
        table = self._fbs.table(name)
        vtable = pos - self._unpack("<i", pos, where)
        vtable_size = self._unpack("<H", vtable, f"{where} vtable")
        if vtable_size < 4 or vtable_size % 2:
            raise FlatbufferReadError(f"{where}: vtable size {vtable_size} is invalid")
        self._span(vtable, vtable_size, 1, f"{where} vtable")

        def field_pos(slot: int) -> int:
            entry = 4 + 2 * slot
            if entry + 2 > vtable_size:
                return 0
            voffset = self._unpack("<H", vtable + entry, f"{where} vtable")
            return pos + voffset if voffset else 0

        kwargs = {}
        for f in table.fields:
            if f.deprecated:
                continue
            fwhere = f"{where}.{f.name}"
            at = field_pos(f.slot)
            kind = f.type.kind
            if kind in ("scalar", "enum"):
                kwargs[f.name] = (self._scalar(f.type, at, fwhere) if at
                                  else self._typed_scalar(f.type, f.default))
            elif kind == "union":
                tag_at = field_pos(f.slot - 1)
                tag = self._unpack("<B", tag_at, fwhere + "_type") if tag_at else 0
                members = self._fbs.unions[f.type.name]
                if tag == 0 or not at:
                    raise FlatbufferReadError(f"{fwhere}: the union holds no value")
                if tag > len(members):
                    raise FlatbufferReadError(f"{fwhere}: union tag {tag} is not a member of "
                                              f"{f.type.name} (1..{len(members)})")
                kwargs[f.name] = self._table(self._offset(at, fwhere), members[tag - 1],
                                             fwhere, depth + 1)
            elif not at:
                kwargs[f.name] = self._absent(f.type)
            else:
                kwargs[f.name] = self._by_offset(f.type, self._offset(at, fwhere), fwhere,
                                                 depth)
        cls = getattr(self._classes, name)
        hints = _type_hints(cls)
        for key, value in kwargs.items():
            if isinstance(value, bytes) and hints.get(key) is not bytes:
                kwargs[key] = list(value)
        return cls(**kwargs)

    def _absent(self, t: TypeRef):
        if t.kind == "vector":
            element = t.element
            if element.kind == "scalar" and element.name == "ubyte":
                return b""
            return []
        if t.kind == "string":
            return ""
        return None

    # --- Values --------------------------------------------------------------

    def _typed_scalar(self, t: TypeRef, value):
        if t.kind == "enum":
            enum_type = getattr(self._classes, t.name, None)
            if enum_type is not None:
                try:
                    return enum_type(value)
                except ValueError:
                    return int(value)  # A value from a newer schema stays readable.
        return value

    def _scalar(self, t: TypeRef, pos: int, where: str):
        scalar = self._fbs.scalar_of(t)
        raw = np.frombuffer(self._data, dtype=np.dtype(scalar.dtype), count=1,
                            offset=self._span(pos, 1, scalar.size, where))[0]
        value = bool(raw) if scalar.name == "bool" else float(raw) if scalar.is_float else int(raw)
        return self._typed_scalar(t, value)

    def _by_offset(self, t: TypeRef, pos: int, where: str, depth: int):
        if t.kind == "table":
            return self._table(pos, t.name, where, depth + 1)
        count = self._unpack("<I", pos, where + " length")
        start = pos + 4
        if t.kind == "string":
            # The terminating NUL is part of the format (flatbuffers' verifier checks it).
            self._span(start, count + 1, 1, where)
            if self._data[start + count] != 0:
                raise FlatbufferReadError(f"{where}: the string is not NUL-terminated")
            try:
                return bytes(self._data[start:start + count]).decode()
            except UnicodeDecodeError as e:
                raise FlatbufferReadError(f"{where}: the string is not UTF-8 ({e})") from None
        element = t.element
        if element.kind in ("scalar", "enum"):
            scalar = self._fbs.scalar_of(element)
            self._span(start, count, scalar.size, where)
            if scalar.name == "ubyte":
                return bytes(self._data[start:start + count])
            values = np.frombuffer(self._data, dtype=np.dtype(scalar.dtype), count=count,
                                   offset=start).tolist()
            return [self._typed_scalar(element, v) for v in values]
        if element.kind in ("table", "string"):
            self._span(start, count, 4, where)
            return [self._by_offset(element, self._offset(start + 4 * i, f"{where}[{i}]"),
                                    f"{where}[{i}]", depth) for i in range(count)]
        raise FlatbufferReadError(f"{where}: vectors of {element.kind}s are not supported")
