"""The parts of a FlatBuffers schema (.fbs) a writer needs: each table's and
struct's fields in declaration order with their wire types and defaults,
each union's members and each enum's underlying type.

schema/program.fbs is the one place the format is declared; the writer
(flatbuffer_writer.py) reads the wire types from here and the values from
the dataclasses of schema.py, so neither repeats the other. Only the subset
of the language our schemas use is accepted; anything else raises
FbsSchemaError naming the line, so a schema change cannot be silently
misread.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple, Union


class FbsSchemaError(ValueError):
    """A schema construct this parser does not understand."""


@dataclass(frozen=True)
class Scalar:
    """A scalar wire type: its size and the flatbuffers/numpy spellings."""

    name: str  # Canonical fbs name, e.g. "int".
    size: int
    method: str  # Suffix of flatbuffers.Builder.Prepend<method>[Slot].
    dtype: str  # Little-endian numpy dtype.
    is_float: bool = False


_SCALAR_LIST = [
    Scalar("bool", 1, "Bool", "|b1"),
    Scalar("byte", 1, "Int8", "|i1"),
    Scalar("ubyte", 1, "Uint8", "|u1"),
    Scalar("short", 2, "Int16", "<i2"),
    Scalar("ushort", 2, "Uint16", "<u2"),
    Scalar("int", 4, "Int32", "<i4"),
    Scalar("uint", 4, "Uint32", "<u4"),
    Scalar("long", 8, "Int64", "<i8"),
    Scalar("ulong", 8, "Uint64", "<u8"),
    Scalar("float", 4, "Float32", "<f4", is_float=True),
    Scalar("double", 8, "Float64", "<f8", is_float=True),
]
SCALARS: Dict[str, Scalar] = {s.name: s for s in _SCALAR_LIST}
# The sized aliases mean the same types.
for _alias, _name in (("int8", "byte"), ("uint8", "ubyte"), ("int16", "short"),
                      ("uint16", "ushort"), ("int32", "int"), ("uint32", "uint"),
                      ("int64", "long"), ("uint64", "ulong"), ("float32", "float"),
                      ("float64", "double")):
    SCALARS[_alias] = SCALARS[_name]


@dataclass(frozen=True)
class Enum:
    name: str
    underlying: Scalar
    values: Dict[str, int]


@dataclass(frozen=True)
class TypeRef:
    """A field's type: `kind` is scalar, enum, string, table, struct, union
    or vector; `name` names the scalar/enum/table/struct/union; `element` is
    a vector's element type."""

    kind: str
    name: str = ""
    element: Optional["TypeRef"] = None


@dataclass(frozen=True)
class Field:
    name: str
    type: TypeRef
    slot: int  # vtable slot; a union's type tag is in slot - 1.
    default: Union[int, float, bool] = 0
    force_align: int = 0
    deprecated: bool = False


@dataclass
class Composite:
    """A table or a struct, with its fields in declaration order."""

    name: str
    is_struct: bool
    fields: List[Field] = field(default_factory=list)

    @property
    def slot_count(self) -> int:
        return self.fields[-1].slot + 1 if self.fields else 0


@dataclass
class FbsSchema:
    composites: Dict[str, Composite]
    unions: Dict[str, List[str]]  # Member table names; the type tag is index + 1.
    enums: Dict[str, Enum]
    root_type: str = ""
    file_identifier: bytes = b""

    def table(self, name: str) -> Composite:
        found = self.composites.get(name)
        if found is None or found.is_struct:
            raise FbsSchemaError(f"the schema has no table '{name}'")
        return found

    def struct_layout(self, name: str) -> Tuple[int, int, List[Tuple[Field, int]]]:
        """(alignment, size, [(field, offset)]) of struct `name`, laid out as
        flatc does: each field at its own alignment, the size padded to the
        largest."""
        struct = self.composites[name]
        offset, alignment, placed = 0, 1, []
        for f in struct.fields:
            f_align, f_size = self.inline_size(f.type)
            offset = (offset + f_align - 1) // f_align * f_align
            placed.append((f, offset))
            offset += f_size
            alignment = max(alignment, f_align)
        return alignment, (offset + alignment - 1) // alignment * alignment, placed

    def inline_size(self, t: TypeRef) -> Tuple[int, int]:
        """(alignment, size) of a scalar, enum or struct stored inline."""
        if t.kind == "scalar":
            s = SCALARS[t.name]
            return s.size, s.size
        if t.kind == "enum":
            s = self.enums[t.name].underlying
            return s.size, s.size
        if t.kind == "struct":
            alignment, size, _ = self.struct_layout(t.name)
            return alignment, size
        raise FbsSchemaError(f"type '{t.name or t.kind}' is not stored inline")

    def scalar_of(self, t: TypeRef) -> Scalar:
        return self.enums[t.name].underlying if t.kind == "enum" else SCALARS[t.name]


_TOKEN = re.compile(r'\s*(?:(?P<string>"[^"]*")|(?P<word>[A-Za-z0-9_.+\-]+)|(?P<punct>[{}();:,=\[\]]))')


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


class _Parser:
    def __init__(self, text: str, origin: str) -> None:
        self.origin = origin
        self.tokens: List[Tuple[str, int]] = []
        for line_no, line in enumerate(_strip_comments(text).split("\n"), start=1):
            pos = 0
            while pos < len(line):
                m = _TOKEN.match(line, pos)
                if m is None or m.end() == pos:
                    if line[pos:].strip():
                        raise FbsSchemaError(f"{origin}:{line_no}: cannot read {line[pos:]!r}")
                    break
                self.tokens.append((m.group(m.lastgroup), line_no))
                pos = m.end()
        self.pos = 0

    def error(self, message: str) -> FbsSchemaError:
        line = self.tokens[min(self.pos, len(self.tokens) - 1)][1] if self.tokens else 0
        return FbsSchemaError(f"{self.origin}:{line}: {message}")

    def peek(self) -> str:
        return self.tokens[self.pos][0] if self.pos < len(self.tokens) else ""

    def take(self, expected: Optional[str] = None) -> str:
        if self.pos >= len(self.tokens):
            raise self.error(f"unexpected end of schema (expected {expected or 'more'})")
        token = self.tokens[self.pos][0]
        if expected is not None and token != expected:
            raise self.error(f"expected '{expected}', found '{token}'")
        self.pos += 1
        return token


def parse_fbs(text: str, origin: str = "<schema>") -> FbsSchema:
    """Parses schema text. Raises FbsSchemaError on anything unsupported."""
    p = _Parser(text, origin)
    raw_fields: Dict[str, List[Tuple[str, str, Optional[str], Dict[str, str]]]] = {}
    kinds: Dict[str, bool] = {}  # name -> is_struct, in declaration order
    unions: Dict[str, List[str]] = {}
    enums: Dict[str, Enum] = {}
    root_type, identifier = "", b""
    while p.peek():
        keyword = p.take()
        if keyword in ("namespace", "root_type", "file_extension", "attribute"):
            value = p.take()
            if keyword == "root_type":
                root_type = value
            p.take(";")
        elif keyword == "file_identifier":
            identifier = p.take().strip('"').encode()
            p.take(";")
        elif keyword in ("table", "struct"):
            name = p.take()
            kinds[name] = keyword == "struct"
            raw_fields[name] = []
            p.take("{")
            while p.peek() != "}":
                fname = p.take()
                p.take(":")
                ftype = p.take()
                if ftype == "[":
                    element = p.take()
                    if p.peek() == ":":
                        raise p.error(f"fixed-size array field '{fname}' is not supported")
                    p.take("]")
                    ftype = f"[{element}]"
                default = None
                if p.peek() == "=":
                    p.take("=")
                    default = p.take()
                attributes: Dict[str, str] = {}
                if p.peek() == "(":
                    p.take("(")
                    while p.peek() != ")":
                        attribute = p.take()
                        attributes[attribute] = ""
                        if p.peek() == ":":
                            p.take(":")
                            attributes[attribute] = p.take()
                        if p.peek() == ",":
                            p.take(",")
                    p.take(")")
                p.take(";")
                raw_fields[name].append((fname, ftype, default, attributes))
            p.take("}")
        elif keyword == "union":
            name = p.take()
            p.take("{")
            members = []
            while p.peek() != "}":
                member = p.take()
                if p.peek() == ":":
                    raise p.error(f"aliased union member '{member}' is not supported")
                members.append(member)
                if p.peek() == ",":
                    p.take(",")
            p.take("}")
            unions[name] = members
        elif keyword == "enum":
            name = p.take()
            p.take(":")
            underlying = p.take()
            if underlying not in SCALARS or SCALARS[underlying].is_float:
                raise p.error(f"enum '{name}' has underlying type '{underlying}', not an integer")
            p.take("{")
            values: Dict[str, int] = {}
            next_value = 0
            while p.peek() != "}":
                member = p.take()
                if p.peek() == "=":
                    p.take("=")
                    next_value = int(p.take(), 0)
                values[member] = next_value
                next_value += 1
                if p.peek() == ",":
                    p.take(",")
            p.take("}")
            enums[name] = Enum(name, SCALARS[underlying], values)
        else:
            raise p.error(f"unsupported declaration '{keyword}'")

    def resolve(type_name: str, where: str) -> TypeRef:
        if type_name.startswith("["):
            element = resolve(type_name[1:-1], where)
            if element.kind in ("vector", "union"):
                raise FbsSchemaError(f"{origin}: {where}: vectors of {element.kind}s are not "
                                     f"supported")
            return TypeRef("vector", element=element)
        if type_name in SCALARS:
            return TypeRef("scalar", SCALARS[type_name].name)
        if type_name == "string":
            return TypeRef("string", "string")
        if type_name in enums:
            return TypeRef("enum", type_name)
        if type_name in unions:
            return TypeRef("union", type_name)
        if type_name in kinds:
            return TypeRef("struct" if kinds[type_name] else "table", type_name)
        raise FbsSchemaError(f"{origin}: {where}: unknown type '{type_name}'")

    def default_of(t: TypeRef, text: Optional[str], where: str):
        if t.kind == "scalar":
            scalar = SCALARS[t.name]
            if text is None:
                return False if scalar.name == "bool" else 0.0 if scalar.is_float else 0
            if scalar.name == "bool":
                return text == "true"
            return float(text) if scalar.is_float else int(text, 0)
        if t.kind == "enum":
            if text is None:
                return 0
            values = enums[t.name].values
            return values[text] if text in values else int(text, 0)
        if text is not None:
            raise FbsSchemaError(f"{origin}: {where}: only scalars and enums take a default")
        return 0

    composites: Dict[str, Composite] = {}
    for name, is_struct in kinds.items():
        composite = Composite(name, is_struct)
        slot = 0
        for fname, ftype, default, attributes in raw_fields[name]:
            where = f"{name}.{fname}"
            if "id" in attributes:
                raise FbsSchemaError(f"{origin}: {where}: explicit field ids are not supported")
            t = resolve(ftype, where)
            if is_struct and t.kind not in ("scalar", "enum", "struct"):
                raise FbsSchemaError(f"{origin}: {where}: a struct field must be a scalar, "
                                     f"enum or struct")
            if t.kind == "union":
                slot += 1  # The hidden `<name>_type` tag takes the slot before.
            composite.fields.append(Field(fname, t, slot, default_of(t, default, where),
                                          int(attributes.get("force_align", "0") or 0),
                                          "deprecated" in attributes))
            slot += 1
        composites[name] = composite
    for name, members in unions.items():
        for member in members:
            if member not in kinds or kinds[member]:
                raise FbsSchemaError(f"{origin}: union '{name}' member '{member}' is not a table")
    return FbsSchema(composites, unions, enums, root_type, identifier)


@functools.lru_cache(maxsize=None)
def load_fbs(path: Path) -> FbsSchema:
    """The parsed schema at `path` (cached per path)."""
    return parse_fbs(Path(path).read_text(), str(path))
