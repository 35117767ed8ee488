"""Flatbuffer bytes -> dataclass objects, generically and defensively: the
reading half of flatbuffer_writer.py, for files that come from outside
(ETDump traces, bundled programs).

Every offset, vtable, string and vector is bounds-checked before it is
read, so a truncated or corrupt file raises FlatbufferReadError naming the
field path and the byte offset instead of reading out of range or looping.
Field slots, wire types and defaults come from the parsed .fbs schema
(fbs_schema.py); the objects are the schema's dataclasses, looked up by
table name in a dict or a module. Absent scalars read as their schema
default (writers leave defaults out); absent tables, strings and vectors
read as None, or as empty values with `empty_when_absent`. A vector of
ubyte reads as bytes where its dataclass field is annotated bytes, else as
a list.
"""

from __future__ import annotations

import functools
import struct
import typing
from typing import Any, Mapping, Optional, Union

import numpy as np

from torchlight.pte.fbs_schema import FbsSchema, Field, TypeRef

# Deeper nesting than any real schema has means a cyclic or forged file.
MAX_DEPTH = 64


# numpy dtype of fbs_schema.Scalar -> struct format (struct is much faster
# than numpy for one value).
_STRUCT_FORMATS = {"|b1": "?", "|i1": "b", "|u1": "B", "<i2": "<h", "<u2": "<H", "<i4": "<i",
                   "<u4": "<I", "<i8": "<q", "<u8": "<Q", "<f4": "<f", "<f8": "<d"}


class FlatbufferReadError(ValueError):
    """The bytes are not a valid buffer of the schema; names where and why."""


@functools.lru_cache(maxsize=None)
def _bytes_fields(cls) -> frozenset:
    """The fields of dataclass `cls` annotated bytes or Optional[bytes]."""
    return frozenset(name for name, hint in typing.get_type_hints(cls).items()
                     if hint in (bytes, Optional[bytes]))


class FlatbufferReader:
    """Reads one buffer of one schema into dataclasses. `classes` maps table
    and enum names to classes (a dict, or a module holding them); `enums`
    overrides where enum classes come from. `start` is where the
    flatbuffer begins (after a size prefix)."""

    def __init__(self, fbs: FbsSchema, classes: Union[Mapping[str, Any], Any], data: bytes,
                 start: int = 0, enums: Optional[Mapping[str, Any]] = None,
                 empty_when_absent: bool = False, unions_required: bool = False) -> None:
        self._fbs = fbs
        self._classes = classes
        self._enums = enums
        self._empty_when_absent = empty_when_absent
        self._unions_required = unions_required
        self._data = memoryview(bytes(data))
        self._start = start
        self._end = len(self._data)
        # Each table of a real buffer has its own 4-byte soffset, so reading
        # more tables than that means offsets are shared to multiply the work.
        self._tables_left = len(self._data) // 4 + 1

    def read_root(self, file_identifier: bytes = b""):
        if self._end - self._start < 8:
            raise FlatbufferReadError(f"the buffer is {self._end - self._start} bytes, too short "
                                      f"for a flatbuffer (at least 8)")
        found = bytes(self._data[self._start + 4:self._start + 8])
        if file_identifier and found != file_identifier:
            raise FlatbufferReadError(f"file identifier is {found!r}, expected "
                                      f"{file_identifier!r}")
        root = self._uoffset(self._start, "root offset")
        return self._table(root, self._fbs.root_type, self._fbs.root_type, 0)

    def _class(self, name: str):
        if isinstance(self._classes, Mapping):
            return self._classes[name]
        return getattr(self._classes, name)

    def _enum_class(self, name: str):
        if self._enums is not None:
            return self._enums.get(name)
        if isinstance(self._classes, Mapping):
            return self._classes.get(name)
        return getattr(self._classes, name, None)

    # --- Bounds-checked primitives ------------------------------------------

    def _need(self, pos: int, size: int, what: str) -> None:
        if pos < self._start or pos + size > self._end:
            raise FlatbufferReadError(
                f"{what}: {size} bytes at offset {pos} are outside the buffer "
                f"(bytes {self._start}..{self._end})")

    def _unpack(self, fmt: str, pos: int, what: str):
        self._need(pos, struct.calcsize(fmt), what)
        return struct.unpack_from(fmt, self._data, pos)[0]

    def _uoffset(self, pos: int, what: str) -> int:
        """The position a uoffset stored at `pos` points to."""
        target = pos + self._unpack("<I", pos, what)
        if target >= self._end:
            raise FlatbufferReadError(f"{what}: offset stored at {pos} points to {target}, "
                                      f"past the end of the buffer ({self._end} bytes)")
        return target

    # --- Tables -------------------------------------------------------------

    def _table(self, pos: int, name: str, path: str, depth: int):
        if depth > MAX_DEPTH:
            raise FlatbufferReadError(f"{path}: tables nested deeper than {MAX_DEPTH} "
                                      f"at offset {pos}")
        self._tables_left -= 1
        if self._tables_left < 0:
            raise FlatbufferReadError(f"{path}: more tables than a buffer of {self._end} bytes "
                                      f"can hold (offsets are shared), at offset {pos}")
        table = self._fbs.table(name)
        vtable = pos - self._unpack("<i", pos, f"{path} (table start)")
        self._need(vtable, 4, f"{path} (vtable)")
        vtable_size, table_size = struct.unpack_from("<HH", self._data, vtable)
        if vtable_size < 4 or vtable_size % 2:
            raise FlatbufferReadError(f"{path}: vtable at offset {vtable} has invalid size "
                                      f"{vtable_size}")
        self._need(vtable, vtable_size, f"{path} (vtable)")
        self._need(pos, max(table_size, 4), f"{path} (table body)")
        slots = struct.unpack_from(f"<{(vtable_size - 4) // 2}H", self._data, vtable + 4)
        values = {}
        for f in table.fields:
            if f.deprecated:
                continue
            field_offset = slots[f.slot] if f.slot < len(slots) else 0
            if not field_offset:
                values[f.name] = self._absent(f, path)
                continue
            values[f.name] = self._field(f, pos, field_offset, table_size, slots, path, depth)
        cls = self._class(name)
        for key in [k for k, v in values.items() if isinstance(v, bytes)]:
            if key not in _bytes_fields(cls):
                values[key] = list(values[key])
        return cls(**values)

    def _absent(self, f: Field, path: str):
        kind = f.type.kind
        if kind in ("scalar", "enum"):
            return self._enum_value(f.type, f.default)
        if kind == "union" and self._unions_required:
            raise FlatbufferReadError(f"{path}.{f.name}: the union holds no value")
        if not self._empty_when_absent:
            return None
        if kind == "string":
            return ""
        if kind == "vector":
            element = f.type.element
            return b"" if element.kind == "scalar" and element.name == "ubyte" else []
        return None

    def _field(self, f: Field, table_pos: int, field_offset: int, table_size: int, slots,
               path: str, depth: int):
        """A present field (field_offset != 0) of the table at table_pos.
        Error messages are built only when needed: this runs per field."""
        kind = f.type.kind
        inline = self._fbs.scalar_of(f.type).size if kind in ("scalar", "enum") else 4
        pos = table_pos + field_offset
        # As flatbuffers' verifier: the field starts inside its table and
        # its bytes are inside the buffer.
        if kind == "struct" or field_offset >= table_size or pos + inline > self._end:
            what = ("struct fields are not supported by this reader" if kind == "struct" else
                    f"field offset {field_offset} ({inline} bytes) is outside its table "
                    f"({table_size} bytes at offset {table_pos}) or the buffer")
            raise FlatbufferReadError(f"{path}.{f.name}: {what}")
        if kind in ("scalar", "enum"):
            fmt = _STRUCT_FORMATS[self._fbs.scalar_of(f.type).dtype]
            return self._enum_value(f.type, struct.unpack_from(fmt, self._data, pos)[0])
        where = f"{path}.{f.name}"
        if kind == "union":
            tag_offset = slots[f.slot - 1]
            tag = self._unpack("<B", table_pos + tag_offset, f"{where}_type") if tag_offset else 0
            members = self._fbs.unions[f.type.name]
            if not 1 <= tag <= len(members):
                raise FlatbufferReadError(f"{where}: union tag {tag} at offset {table_pos} is "
                                          f"not a member of {f.type.name}")
            member = members[tag - 1]
            return self._table(self._uoffset(pos, where), member, where, depth + 1)
        target = self._uoffset(pos, where)
        if kind == "string":
            return self._string(target, where)
        if kind == "table":
            return self._table(target, f.type.name, where, depth + 1)
        return self._vector(target, f.type.element, where, depth)

    def _enum_value(self, t: TypeRef, value):
        cls = self._enum_class(t.name) if t.kind == "enum" else None
        if cls is None:
            return value
        try:
            return cls(value)
        except ValueError:
            return value  # An enum value newer than this reader: kept as a number.

    def _string(self, pos: int, where: str) -> str:
        length = self._unpack("<I", pos, where)
        self._need(pos + 4, length + 1, f"{where} (string of {length} bytes)")
        if self._data[pos + 4 + length] != 0:
            raise FlatbufferReadError(f"{where}: string at offset {pos} is not NUL-terminated")
        try:
            return bytes(self._data[pos + 4:pos + 4 + length]).decode("utf-8")
        except UnicodeDecodeError as e:
            raise FlatbufferReadError(f"{where}: string at offset {pos} is not UTF-8 ({e})") \
                from None

    def _vector(self, pos: int, element: TypeRef, where: str, depth: int):
        count = self._unpack("<I", pos, where)
        body = pos + 4
        if element.kind in ("scalar", "enum"):
            scalar = self._fbs.scalar_of(element)
            self._need(body, count * scalar.size, f"{where} (vector of {count})")
            if scalar.name == "ubyte" and element.kind == "scalar":
                return bytes(self._data[body:body + count])
            array = np.frombuffer(self._data, dtype=scalar.dtype, count=count, offset=body)
            return [self._enum_value(element, v) for v in array.tolist()]
        self._need(body, count * 4, f"{where} (vector of {count} offsets)")
        items = []
        for i in range(count):
            item_where = f"{where}[{i}]"
            target = self._uoffset(body + 4 * i, item_where)
            if element.kind == "string":
                items.append(self._string(target, item_where))
            elif element.kind == "table":
                items.append(self._table(target, element.name, item_where, depth + 1))
            else:
                raise FlatbufferReadError(f"{where}: vectors of {element.kind} are not supported")
        return items
