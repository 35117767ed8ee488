"""Dataclass objects -> flatbuffer bytes, generically, from the .fbs schema.

One routine walks an object of schema.py (a dataclass named after its
table), looks each field up in the parsed schema (fbs_schema.py) for its
wire type, slot and default, and emits it with flatbuffers.Builder's public
API: scalars and enums, strings, tables, structs, unions, and vectors of
scalars, strings, tables and structs. Nothing here is specific to one
table, so a field added to program.fbs and to its dataclass is written
without touching this file (the reader, pte_file.py, is generic the same
way).

The result is a plain ET12 flatbuffer: no extended header, no segments
(pte_file.py adds those). `force_align` on a vector is honoured, which
flatc's own Python generator ignores.
"""

from __future__ import annotations

import dataclasses
import functools
import struct
from typing import Dict, List, Optional, Tuple

import flatbuffers
import numpy as np

from torchlight.pte import codegen, schema
from torchlight.pte.fbs_schema import Composite, FbsSchema, Field, TypeRef, load_fbs

FILE_IDENTIFIER = b"ET12"
# The largest `force_align` in program.fbs (constant and delegate data).
FORCE_ALIGN = 16


_INLINE_KINDS = ("scalar", "enum", "struct")


@functools.lru_cache(maxsize=None)
def _integer_limits(dtype: str) -> Tuple[int, int]:
    limits = np.iinfo(np.dtype(dtype))
    return int(limits.min), int(limits.max)


class FlatbufferWriteError(ValueError):
    """An object does not fit the schema; the message names the field."""


class FlatbufferWriter:
    """Writes dataclass objects of one schema into one flatbuffer."""

    def __init__(self, fbs: FbsSchema, initial_size: int = 4096) -> None:
        self._fbs = fbs
        self._b = flatbuffers.Builder(initial_size)
        self._fields: Dict[str, List[Field]] = {}

    def finish(self, root, file_identifier: Optional[bytes] = None) -> bytes:
        """The finished buffer with `root` (a table object) as its root."""
        offset = self._table(root, self._fbs.root_type or type(root).__name__)
        self._b.Finish(offset, file_identifier=file_identifier)
        return bytes(self._b.Output())

    # --- Tables ------------------------------------------------------------

    def _matched_fields(self, table: Composite, obj) -> List[Field]:
        """The table's fields, after checking that the object's dataclass
        declares the same fields in the same order (caught once per type)."""
        known = self._fields.get(table.name)
        if known is None:
            declared = [f.name for f in dataclasses.fields(obj)]
            expected = [f.name for f in table.fields]
            if declared != expected:
                raise FlatbufferWriteError(
                    f"dataclass {type(obj).__name__} has fields {declared}, but table "
                    f"{table.name} in the schema has {expected}")
            known = self._fields[table.name] = table.fields
        return known

    def _table(self, obj, expected: str) -> int:
        name = type(obj).__name__
        if name != expected or not dataclasses.is_dataclass(obj):
            raise FlatbufferWriteError(f"expected a {expected} table object, got {obj!r}")
        table = self._fbs.table(name)
        fields = self._matched_fields(table, obj)
        # Offsets (strings, vectors, tables) must be finished before the table starts.
        offsets: Dict[str, int] = {}
        b = self._b
        f = fields[0] if fields else None
        try:
            for f in fields:
                value = getattr(obj, f.name)
                if value is None or f.deprecated or f.type.kind in _INLINE_KINDS:
                    continue
                offsets[f.name] = self._offset(f.type, value, f.force_align)
            b.StartObject(table.slot_count)
            for f in fields:
                value = getattr(obj, f.name)
                if value is None or f.deprecated:
                    continue
                kind = f.type.kind
                if kind in ("scalar", "enum"):
                    scalar = self._fbs.scalar_of(f.type)
                    getattr(b, f"Prepend{scalar.method}Slot")(
                        f.slot, self._scalar_value(f.type, value), f.default)
                elif kind == "struct":
                    b.PrependStructSlot(f.slot, self._struct(f.type.name, value), 0)
                elif kind == "union":
                    b.PrependUint8Slot(f.slot - 1, self._union_tag(f.type.name, value), 0)
                    b.PrependUOffsetTRelativeSlot(f.slot, offsets[f.name], 0)
                else:
                    b.PrependUOffsetTRelativeSlot(f.slot, offsets[f.name], 0)
        except FlatbufferWriteError:
            raise
        except (TypeError, ValueError, OverflowError, struct.error) as e:
            # Names the field; errors from nested tables already name theirs.
            raise FlatbufferWriteError(f"{table.name}.{f.name}: {e}") from e
        return b.EndObject()

    # --- Values ------------------------------------------------------------

    def _scalar_value(self, t: TypeRef, value):
        scalar = self._fbs.scalar_of(t)
        if scalar.name == "bool":
            return bool(value)
        if scalar.is_float:
            return float(value)
        number = int(value)
        low, high = _integer_limits(scalar.dtype)
        if not low <= number <= high:
            raise ValueError(f"{number} does not fit in a {scalar.name}")
        return number

    def _union_tag(self, union: str, value) -> int:
        members = self._fbs.unions[union]
        name = type(value).__name__
        if name not in members:
            raise FlatbufferWriteError(f"{name} is not a member of union {union} "
                                       f"({', '.join(members)})")
        return members.index(name) + 1

    def _offset(self, t: TypeRef, value, force_align: int = 0) -> int:
        """Writes a string, vector, table or union value; returns its offset."""
        if t.kind == "string":
            return self._b.CreateString(value)
        if t.kind == "table":
            return self._table(value, t.name)
        if t.kind == "union":
            self._union_tag(t.name, value)
            return self._table(value, type(value).__name__)
        if t.kind == "vector":
            return self._vector(t.element, value, force_align)
        raise FlatbufferWriteError(f"type {t.kind} is stored inline, not by offset")

    def _vector(self, element: TypeRef, items, force_align: int = 0) -> int:
        b = self._b
        if element.kind in ("scalar", "enum"):
            dtype = np.dtype(self._fbs.scalar_of(element).dtype)
            if isinstance(items, (bytes, bytearray, memoryview)):
                data = np.frombuffer(bytes(items), dtype=dtype)
            else:
                data = np.asarray(items, dtype=dtype).reshape(-1)
            if force_align > dtype.itemsize:
                # Pads so the elements start `force_align`-aligned.
                b.Prep(force_align, data.nbytes)
            return b.CreateNumpyVector(data)
        if element.kind == "struct":
            alignment, size, _ = self._fbs.struct_layout(element.name)
            b.StartVector(size, len(items), max(alignment, force_align))
            for item in reversed(items):
                self._struct_fields(element.name, item)
            return b.EndVector()
        offsets = [self._offset(element, item) for item in items]
        b.StartVector(4, len(offsets), 4)
        for offset in reversed(offsets):
            b.PrependUOffsetTRelative(offset)
        return b.EndVector()

    # --- Structs (stored inline) --------------------------------------------

    def _struct(self, name: str, value) -> int:
        alignment, size, _ = self._fbs.struct_layout(name)
        self._b.Prep(alignment, size)
        self._struct_fields(name, value)
        return self._b.Offset()

    def _struct_fields(self, name: str, value) -> None:
        """Writes a struct's fields back to front with flatc's padding."""
        if type(value).__name__ != name:
            raise FlatbufferWriteError(f"expected a {name} struct object, got {value!r}")
        _, size, placed = self._fbs.struct_layout(name)
        end = size
        for f, offset in reversed(placed):
            _, f_size = self._fbs.inline_size(f.type)
            self._b.Pad(end - offset - f_size)
            member = getattr(value, f.name)
            if f.type.kind == "struct":
                self._struct_fields(f.type.name, member)
            else:
                scalar = self._fbs.scalar_of(f.type)
                getattr(self._b, f"Prepend{scalar.method}")(self._scalar_value(f.type, member))
            end = offset
        self._b.Pad(end)


def program_schema() -> FbsSchema:
    """schema/program.fbs, parsed (the one declaration of the format)."""
    return load_fbs(codegen.schema_path())


def write_flatbuffer(program: schema.Program) -> bytes:
    """The program as an ET12 flatbuffer (no extended header, no segments)."""
    return FlatbufferWriter(program_schema()).finish(program, FILE_IDENTIFIER)

