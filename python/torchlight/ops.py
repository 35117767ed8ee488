"""Operator facts derived from torch's own operator schemas.

Nothing here lists operators by hand: out variants, view-to-copy
replacements and the names written into a program all come from the
OpOverload objects and their FunctionSchema.
"""

from __future__ import annotations

import functools
import operator
from typing import Any, Callable, List, Optional, Sequence, Tuple

import torch
import torch.fx
from torch._ops import OpOverload

from torchlight.pte.schema import ScalarType

# --- Constants ------------------------------------------------------------------------

# Namespace of the scalar-arithmetic operators runtimes register for SymInt
# math (upstream's prim ops), and the overload they take.
PRIM_NAMESPACE = "executorch_prim"
PRIM_OVERLOAD = "Scalar"
# torch's name for an operator's unnamed overload; programs write "" instead.
TORCH_DEFAULT_OVERLOAD = "default"
# torch.fx node.meta key holding the source traceback of a node.
STACK_TRACE = "stack_trace"
# Attribute that marks a function as a delegate-call graph marker.
_DELEGATE_MARKER = "_torchlight_delegate"

# --- Markers used in lowered graphs ----------------------------------------------


def alloc(sizes: Sequence[int], dtype: torch.dtype) -> torch.Tensor:
    """Graph marker for a memory-planned out tensor (its upper-bound shape).

    Out-variant nodes take these as their out arguments; memory planning
    gives each one a place in an arena. Callable, so a lowered graph still
    runs eagerly for debugging.
    """
    return torch.empty(tuple(sizes), dtype=dtype)


def is_alloc(node: torch.fx.Node) -> bool:
    return node.op == "call_function" and node.target is alloc


def mark_delegate_call(fn: Callable) -> Callable:
    """Marks `fn` as the graph marker of a delegate call (see delegation.py)."""
    setattr(fn, _DELEGATE_MARKER, True)
    return fn


def is_delegate_call(target: Any) -> bool:
    """Whether a node's target is a delegate-call marker."""
    return bool(getattr(target, _DELEGATE_MARKER, False))


# --- dtype and enum codes ----------------------------------------------------------

_SCALAR_TYPES = {
    torch.uint8: ScalarType.BYTE, torch.int8: ScalarType.CHAR, torch.int16: ScalarType.SHORT,
    torch.int32: ScalarType.INT, torch.int64: ScalarType.LONG, torch.float16: ScalarType.HALF,
    torch.float32: ScalarType.FLOAT, torch.float64: ScalarType.DOUBLE, torch.bool: ScalarType.BOOL,
    torch.qint8: ScalarType.QINT8, torch.quint8: ScalarType.QUINT8,
    torch.qint32: ScalarType.QINT32, torch.bfloat16: ScalarType.BFLOAT16,
    torch.quint4x2: ScalarType.QUINT4X2, torch.quint2x4: ScalarType.QUINT2X4,
    torch.bits16: ScalarType.BITS16, torch.float8_e5m2: ScalarType.FLOAT8E5M2,
    torch.float8_e4m3fn: ScalarType.FLOAT8E4M3FN, torch.float8_e5m2fnuz: ScalarType.FLOAT8E5M2FNUZ,
    torch.float8_e4m3fnuz: ScalarType.FLOAT8E4M3FNUZ, torch.uint16: ScalarType.UINT16,
    torch.uint32: ScalarType.UINT32, torch.uint64: ScalarType.UINT64,
}
_DTYPES = {v: k for k, v in _SCALAR_TYPES.items()}

# c10 enum values, as kernels read them from Int arguments.
_MEMORY_FORMATS = {torch.contiguous_format: 0, torch.preserve_format: 1,
                   torch.channels_last: 2, torch.channels_last_3d: 3}
_LAYOUTS = {torch.strided: 0, torch.sparse_coo: 1}


def scalar_type(dtype: torch.dtype) -> ScalarType:
    """The program's ScalarType for a torch dtype. Raises KeyError for complex types."""
    try:
        return _SCALAR_TYPES[dtype]
    except KeyError:
        raise KeyError(f"dtype {dtype} has no .pte ScalarType") from None


def torch_dtype(code: int) -> torch.dtype:
    return _DTYPES[ScalarType(code)]


def enum_code(value: Any) -> Optional[int]:
    """The Int a dtype / memory format / layout argument is emitted as, or None."""
    if isinstance(value, torch.dtype):
        return int(scalar_type(value))
    if isinstance(value, torch.memory_format):
        return _MEMORY_FORMATS[value]
    if isinstance(value, torch.layout):
        return _LAYOUTS[value]
    return None


# --- Names ----------------------------------------------------------------------------


def operator_name(op: OpOverload) -> Tuple[str, str]:
    """("aten::add", "out"): the program's Operator name and overload. The
    default overload is written "" as the spec says ("aten::sym_numel"), not
    torch's "default"; the runtime registers such kernels under both names."""
    overload = op._overloadname
    return op._schema.name, "" if overload == TORCH_DEFAULT_OVERLOAD else overload


def qualified_name(op: OpOverload) -> str:
    name, overload = operator_name(op)
    return f"{name}.{overload}" if overload else name


# --- Schema queries ---------------------------------------------------------------


def is_out_variant(op: OpOverload) -> bool:
    return any(a.is_out for a in op._schema.arguments)


def out_arguments(op: OpOverload) -> List[torch._C.Argument]:
    return [a for a in op._schema.arguments if a.is_out]


def writes_arguments(op: OpOverload) -> bool:
    """True when the op writes any argument (in-place or out)."""
    return any(a.alias_info is not None and a.alias_info.is_write for a in op._schema.arguments)


def is_assertion(op: OpOverload) -> bool:
    """An op with no result that writes nothing exists only for its check
    (aten::_assert_scalar, aten::sym_constrain_range, ...)."""
    return not op._schema.returns and not writes_arguments(op)


def returns_symbolic(op: OpOverload) -> bool:
    """Ops computing sizes (aten::sym_size.int, ...) or reading one (aten::_local_scalar_dense,
    Tensor.item()): they return a SymInt or Scalar, not tensors."""
    returns = op._schema.returns
    return len(returns) == 1 and isinstance(returns[0].type, (torch.SymIntType, torch.IntType,
                                                              torch.NumberType))


# Arguments an out variant may drop: the out tensor already carries them.
def _is_tensor_option(arg: torch._C.Argument) -> bool:
    text = str(arg.real_type)
    return text in ("Optional[ScalarType]", "Optional[Layout]", "Optional[Device]",
                    "ScalarType", "Layout", "Device") or arg.name == "pin_memory"


def _signature_matches(functional: Sequence[torch._C.Argument],
                       candidate: Sequence[torch._C.Argument]) -> Optional[int]:
    """How many tensor options `candidate` drops from `functional`, or None if
    the two do not take the same arguments."""
    dropped = 0
    i = 0
    for arg in functional:
        if i < len(candidate) and candidate[i].name == arg.name and \
                str(candidate[i].real_type) == str(arg.real_type):
            i += 1
        elif _is_tensor_option(arg):
            dropped += 1
        else:
            return None
    return dropped if i == len(candidate) else None


@functools.lru_cache(maxsize=None)
def out_variant(op: OpOverload) -> Optional[OpOverload]:
    """The out= overload computing the same thing as functional `op`, or None.

    Found from the schemas of `op`'s overload packet: an overload whose
    non-out arguments are `op`'s arguments (in order, by name and type; it may
    drop dtype/layout/device/pin_memory, which its out tensor implies) and
    whose out arguments are as many as `op`'s returns. Exact matches win.
    """
    if is_out_variant(op):
        return op
    packet = op.overloadpacket
    best, best_dropped = None, None
    for name in packet.overloads():
        candidate = getattr(packet, name)
        outs = out_arguments(candidate)
        if not outs or len(outs) != len(op._schema.returns):
            continue
        rest = [a for a in candidate._schema.arguments if not a.is_out]
        dropped = _signature_matches(op._schema.arguments, rest)
        if dropped is not None and (best_dropped is None or dropped < best_dropped):
            best, best_dropped = candidate, dropped
    return best


@functools.lru_cache(maxsize=None)
def copy_variant(op: OpOverload) -> Optional[OpOverload]:
    """For a view op (aten::view.default), its copying twin (aten::view_copy.default)."""
    namespace, name = op._schema.name.split("::")
    packet = getattr(getattr(torch.ops, namespace), f"{name}_copy", None)
    if packet is None:
        return None
    return getattr(packet, op._overloadname, None)


def is_view(op: OpOverload) -> bool:
    return bool(getattr(op, "is_view", False))


# --- Symbolic integer arithmetic ---------------------------------------------------

_SYM_FUNCTIONS = (operator.add, operator.sub, operator.mul, operator.floordiv, operator.truediv,
                  operator.mod, operator.neg, operator.eq, operator.ne, operator.lt, operator.le,
                  operator.gt, operator.ge, torch.sym_float, torch.sym_int, torch.sym_max,
                  torch.sym_min)


def is_symbolic_function(target: Callable) -> bool:
    """Python-level arithmetic on SymInts that torch.export leaves in graphs."""
    return target in _SYM_FUNCTIONS


def symbolic_operator_name(target: Callable) -> Tuple[str, str]:
    """("executorch_prim::mul", "Scalar") for operator.mul: the names runtimes
    register scalar arithmetic under."""
    return f"{PRIM_NAMESPACE}::{target.__name__}", PRIM_OVERLOAD
