"""Operator schemas: out-variant <-> functional overload matching.

Shared by generate.py (to find the reference of an out kernel) and
tools/kernel_coverage.py (to map core ATen functional operators to the out
kernel names the runtime registers).

An out variant's out arguments are the kwarg-only arguments written through
(alias annotation with "!", e.g. ``Tensor(a!) out``). Its functional overload
has the same operator name and the same non-out arguments (names and declared
types), and writes nothing.
"""

import re
from dataclasses import dataclass

import torch

_NO_DEFAULT = object()


@dataclass
class Arg:
    """One schema argument."""
    name: str
    type: str          # As declared, without alias annotation: "int[1]?", "ScalarType?", "Tensor[]".
    kwarg_only: bool
    is_out: bool       # A kwarg-only argument written through (an out argument).
    default: object    # Python value of the default, or _NO_DEFAULT.

    @property
    def has_default(self):
        return self.default is not _NO_DEFAULT

    @property
    def optional(self):
        return self.type.endswith("?")

    @property
    def base_type(self):
        """The type without a trailing '?' and any list size: "int[]" for "int[1]?"."""
        t = self.type[:-1] if self.optional else self.type
        return re.sub(r"\[\d+\]", "[]", t)

    @property
    def list_size(self):
        """N of "int[N]", else None."""
        m = re.search(r"\[(\d+)\]", self.type)
        return int(m.group(1)) if m else None


def _split_top_level(text):
    """Splits `text` at commas outside brackets/parentheses."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    tail = text[start:].strip()
    if tail:
        parts.append(tail)
    return parts


def _declared_types(schema):
    """{argument name: declared type} from the schema's text.

    torch's Argument.type loses the declared spelling (ScalarType and SymInt
    print as int), so the text is parsed instead.
    """
    text = str(schema)
    open_paren = text.index("(")
    depth = 0
    for i in range(open_paren, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                close = i
                break
    types = {}
    for part in _split_top_level(text[open_paren + 1:close]):
        if part == "*":
            continue
        decl = part.split("=", 1)[0].strip()
        type_text, name = decl.rsplit(" ", 1)
        types[name] = re.sub(r"\([a-z0-9]+!?\)", "", type_text.replace(" ", ""))
    return types


_ARGS_CACHE = {}


def schema_args(op):
    """The arguments of an OpOverload's schema, as Arg (cached; do not modify)."""
    schema = op._schema
    key = (schema.name, schema.overload_name)
    if key not in _ARGS_CACHE:
        _ARGS_CACHE[key] = _parse_args(schema)
    return _ARGS_CACHE[key]


def _parse_args(schema):
    types = _declared_types(schema)
    args = []
    for a in schema.arguments:
        is_write = a.alias_info is not None and a.alias_info.is_write
        default = a.default_value if a.has_default_value() else _NO_DEFAULT
        args.append(Arg(a.name, types[a.name], a.kwarg_only, is_write and a.kwarg_only, default))
    return args


def is_out_variant(op):
    return any(a.is_out for a in schema_args(op))


def writes_any(op):
    return any(a.alias_info is not None and a.alias_info.is_write for a in op._schema.arguments)


def kernel_name(op):
    """"aten::sum.IntList_out" for an OpOverload (no ".overload" for the default)."""
    schema = op._schema
    return schema.name + ("." + schema.overload_name if schema.overload_name else "")


def lookup(name):
    """The OpOverload for "ns::op.overload" (or "ns::op" for the default
    overload). Raises LookupError naming the operator when torch lacks it."""
    if "::" not in name:
        raise LookupError(f"operator name {name!r} has no namespace")
    ns, rest = name.split("::", 1)
    op_name, _, overload = rest.partition(".")
    try:
        packet = getattr(getattr(torch.ops, ns), op_name)
        return getattr(packet, overload or "default")
    except (AttributeError, RuntimeError) as e:
        raise LookupError(f"torch has no operator {name!r}") from e


def _signature(op):
    return [(a.name, a.type) for a in schema_args(op) if not a.is_out]


def functional_for(out_op):
    """The functional overload of an out variant, or None when there is none.

    Same non-out arguments; failing that, for factory functions (zeros.out,
    ones_like.out, full.out), the overload that has in addition only
    TensorOptions arguments with defaults (dtype, layout, device,
    pin_memory), since the out tensor carries those.
    """
    want = _signature(out_op)
    packet = getattr(getattr(torch.ops, out_op._schema.name.split("::")[0]),
                     out_op._schema.name.split("::")[1])
    candidates = [getattr(packet, overload) for overload in packet.overloads()]
    candidates = [c for c in candidates if c is not out_op and not writes_any(c)]
    for candidate in candidates:
        if _signature(candidate) == want:
            return candidate
    for candidate in candidates:
        args = [a for a in schema_args(candidate)]
        extra = [a for a in args if a.name in _TENSOR_OPTIONS]
        if all(a.has_default for a in extra) and \
                [(a.name, a.type) for a in args if a.name not in _TENSOR_OPTIONS] == want:
            return candidate
    return None


def out_variant_for(functional_op):
    """The out variant of a functional overload, or None when there is none."""
    want = _signature(functional_op)
    ns, name = functional_op._schema.name.split("::")
    packet = getattr(getattr(torch.ops, ns), name)
    for overload in packet.overloads():
        candidate = getattr(packet, overload)
        if is_out_variant(candidate) and _signature(candidate) == want:
            return candidate
    return None


# TensorOptions arguments that factory functions take and their out variants
# drop (the out tensor carries dtype, layout and device).
_TENSOR_OPTIONS = {"dtype", "layout", "device", "pin_memory"}


def _packet(ns, name):
    try:
        return getattr(getattr(torch.ops, ns), name)
    except (AttributeError, RuntimeError):
        return None


def kernel_for_functional(op):
    """(kernel name, how it was found) for a functional core ATen operator.

    - "out variant": its out overload by schema matching;
    - "copy variant": a view op X exported as X_copy (view -> view_copy.out);
    - "factory out variant": a factory function whose out overload drops
      the TensorOptions arguments (full -> full.out);
    - "itself": ops with no out form (sym_size.int, an op that is already an
      out variant); the runtime registers them under their own name.
    """
    if is_out_variant(op):
        return kernel_name(op), "itself"
    found = out_variant_for(op)
    if found is not None:
        return kernel_name(found), "out variant"
    ns, name = op._schema.name.split("::")
    copy_packet = _packet(ns, name + "_copy")
    if copy_packet is not None:
        overload = op._schema.overload_name or "default"
        if overload in copy_packet.overloads():
            found = out_variant_for(getattr(copy_packet, overload))
            if found is not None:
                return kernel_name(found), "copy variant"
    want = [s for s in _signature(op) if s[0] not in _TENSOR_OPTIONS]
    packet = _packet(ns, name)
    for overload in packet.overloads():
        candidate = getattr(packet, overload)
        if is_out_variant(candidate) and _signature(candidate) == want:
            return kernel_name(candidate), "factory out variant"
    return kernel_name(op), "itself"


def core_aten_ops():
    """Every functional overload of torch's core ATen set (tagged
    torch.Tag.core), sorted by name."""
    seen, ops = set(), []
    for schema in torch._C._jit_get_all_schemas():
        if not schema.name.startswith("aten::"):
            continue
        name = schema.name + ("." + schema.overload_name if schema.overload_name else "")
        if name in seen:
            continue
        seen.add(name)
        try:
            op = lookup(name)
        except LookupError:
            continue
        if torch.Tag.core in op.tags:
            ops.append(op)
    return sorted(ops, key=kernel_name)
