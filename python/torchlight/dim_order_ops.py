"""The dim_order_ops operators upstream's to_edge emits in place of
aten::_to_copy and aten::empty.memory_format: the layout is a dim order
(int[]?) instead of a memory format, which is how a .pte describes tensors.

torch alone does not define them (ExecuTorch's exir does). This module
defines them under the same namespace and schemas, unless something (exir)
already has, so that programs using them can be exported, read and checked
against PyTorch. Importing it is enough.

Semantics: dim_order None keeps the input's layout (preserve_format); the
identity order is contiguous_format; (0, 2, 3, 1) on a 4-D tensor is
channels_last. Other orders have no memory format and are refused.
"""

from __future__ import annotations

from typing import List, Optional, Sequence

import torch

NAMESPACE = "dim_order_ops"

_SCHEMAS = {
    "_to_dim_order_copy": "(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, "
                          "Device? device=None, bool? pin_memory=None, bool non_blocking=False, "
                          "int[]? dim_order=None) -> Tensor",
    "_to_dim_order_copy.out": "(Tensor self, *, bool non_blocking=False, int[]? dim_order=None, "
                              "Tensor(a!) out) -> Tensor(a!)",
    "_empty_dim_order": "(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
                        "Device? device=None, bool? pin_memory=None, int[]? dim_order=None) "
                        "-> Tensor",
    "_empty_dim_order.out": "(SymInt[] size, *, int[]? dim_order=None, Tensor(a!) out) "
                            "-> Tensor(a!)",
}

CHANNELS_LAST_4D = (0, 2, 3, 1)


def memory_format_for(dim_order: Optional[Sequence[int]]) -> torch.memory_format:
    """The memory format a dim_order argument stands for."""
    if dim_order is None:
        return torch.preserve_format
    order = tuple(int(d) for d in dim_order)
    if order == tuple(range(len(order))):
        return torch.contiguous_format
    if order == CHANNELS_LAST_4D:
        return torch.channels_last
    raise ValueError(f"dim_order {list(order)} has no memory format (only the identity order "
                     f"and {list(CHANNELS_LAST_4D)} for 4-D tensors do)")


def dim_order_for(memory_format: Optional[torch.memory_format], ndim: int) -> Optional[List[int]]:
    """The dim_order argument for a memory_format argument on a rank-ndim tensor."""
    if memory_format in (None, torch.preserve_format):
        return None
    if memory_format == torch.contiguous_format:
        return list(range(ndim))
    if memory_format == torch.channels_last and ndim == 4:
        return list(CHANNELS_LAST_4D)
    raise ValueError(f"memory format {memory_format} on a {ndim}-D tensor has no dim order "
                     "the dim_order operators accept")


def _defined() -> bool:
    try:
        getattr(getattr(torch.ops, NAMESPACE), "_to_dim_order_copy").default
        return True
    except (AttributeError, RuntimeError):
        return False


def _define() -> "torch.library.Library":
    lib = torch.library.Library(NAMESPACE, "DEF")
    for name, signature in _SCHEMAS.items():
        lib.define(name + signature)

    def to_copy(self, *, dtype=None, layout=None, device=None, pin_memory=None,
                non_blocking=False, dim_order=None):
        return torch.ops.aten._to_copy.default(
            self, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
            non_blocking=non_blocking, memory_format=memory_format_for(dim_order))

    def to_copy_out(self, *, non_blocking=False, dim_order=None, out):
        return torch.ops.aten._to_copy.out(self, non_blocking=non_blocking,
                                           memory_format=memory_format_for(dim_order), out=out)

    def empty(size, *, dtype=None, layout=None, device=None, pin_memory=None, dim_order=None):
        return torch.ops.aten.empty.memory_format(
            size, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
            memory_format=memory_format_for(dim_order))

    def empty_out(size, *, dim_order=None, out):
        return torch.ops.aten.empty.out(size, memory_format=memory_format_for(dim_order), out=out)

    # CompositeImplicitAutograd, as upstream registers them: under export
    # they trace through their aten bodies, which fake tensors understand.
    for name, fn in (("_to_dim_order_copy", to_copy), ("_to_dim_order_copy.out", to_copy_out),
                     ("_empty_dim_order", empty), ("_empty_dim_order.out", empty_out)):
        lib.impl(name, fn, "CompositeImplicitAutograd")
    return lib


_LIBRARY = None if _defined() else _define()


def to_dim_order_copy() -> torch._ops.OpOverload:
    return torch.ops.dim_order_ops._to_dim_order_copy.default


def empty_dim_order() -> torch._ops.OpOverload:
    return torch.ops.dim_order_ops._empty_dim_order.default
