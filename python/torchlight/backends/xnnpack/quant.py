"""Quantize/dequantize nodes of PyTorch's pt2e flow (quantized_decomposed
ops) as the XNNPACK delegate sees them."""

from __future__ import annotations

import operator
from typing import Optional, Set

import torch
import torch.fx

NOT_QUANT = object()  # unsupported_reason's answer for nodes that are not q/dq


def _ops(*names):
    found = []
    namespace = getattr(torch.ops, "quantized_decomposed", None)
    for name in names:
        packet, _, overload = name.partition(".")
        op = getattr(getattr(namespace, packet, None), overload or "default", None)
        if op is not None:
            found.append(op)
    return tuple(found)


def _load_quantized_decomposed() -> None:
    # Registers torch.ops.quantized_decomposed.*.
    import torch.ao.quantization.fx._decomposed  # noqa: F401


_load_quantized_decomposed()

QUANTIZE_PER_TENSOR = _ops("quantize_per_tensor", "quantize_per_tensor.tensor")
DEQUANTIZE_PER_TENSOR = _ops("dequantize_per_tensor", "dequantize_per_tensor.tensor")
QUANTIZE_PER_CHANNEL = _ops("quantize_per_channel")
DEQUANTIZE_PER_CHANNEL = _ops("dequantize_per_channel")
CHOOSE_QPARAMS = _ops("choose_qparams.tensor")
QUANTIZE = QUANTIZE_PER_TENSOR + QUANTIZE_PER_CHANNEL
DEQUANTIZE = DEQUANTIZE_PER_TENSOR + DEQUANTIZE_PER_CHANNEL
QDQ = QUANTIZE + DEQUANTIZE + CHOOSE_QPARAMS


def is_qdq(node) -> bool:
    return isinstance(node, torch.fx.Node) and node.op == "call_function" and node.target in QDQ


def is_quantized_value(node) -> bool:
    """A node whose value is an int8 tensor produced by a quantize node."""
    return isinstance(node, torch.fx.Node) and node.op == "call_function" \
        and node.target in QUANTIZE


STATIC_QUANTIZE = _ops("quantize_per_tensor")
STATIC_DEQUANTIZE = _ops("dequantize_per_tensor")
DYNAMIC_QUANTIZE = _ops("quantize_per_tensor.tensor")
DYNAMIC_DEQUANTIZE = _ops("dequantize_per_tensor.tensor")


def _is_int8_range(node: torch.fx.Node) -> bool:
    first = 4 if node.target in QUANTIZE_PER_CHANNEL + DEQUANTIZE_PER_CHANNEL else 3
    qmin, qmax, dtype = node.args[first:first + 3]
    return dtype == torch.int8 and qmin >= -128 and qmax <= 127


def is_constant_node(node, constants: Set[str]) -> bool:
    return isinstance(node, torch.fx.Node) and (
        node.op == "get_attr" or (node.op == "placeholder" and node.name in constants))


def _feeds_only_linears(dq: torch.fx.Node) -> bool:
    linear = torch.ops.aten.linear.default
    return all(u.target is linear and u.args[0] is dq for u in dq.users)


def unsupported_reason(node: torch.fx.Node, constants: Set[str]):
    """NOT_QUANT for nodes other than q/dq; else None or a reason.

    Static per-tensor int8 q/dq of activations, per-tensor or per-channel
    dq of int8 constant weights, and the dynamic pattern choose_qparams ->
    quantize.tensor -> dequantize.tensor -> linear are delegated."""
    if node.target is operator.getitem:
        source = node.args[0]
        if isinstance(source, torch.fx.Node) and source.target in CHOOSE_QPARAMS:
            return unsupported_reason(source, constants)
        return NOT_QUANT
    if node.target not in QDQ:
        return NOT_QUANT
    if node.target in CHOOSE_QPARAMS:
        quantizes = [q for g in node.users for q in g.users]
        if not quantizes or any(q.target not in DYNAMIC_QUANTIZE + DYNAMIC_DEQUANTIZE
                                for q in quantizes):
            return "choose_qparams feeds something other than a dynamic quantize"
        return unsupported_reason(next(q for q in quantizes if q.target in DYNAMIC_QUANTIZE),
                                  constants)
    if not _is_int8_range(node):
        return f"quantization to {node.args[-1]} is not int8"
    source = node.args[0]
    if node.target in DEQUANTIZE_PER_CHANNEL or (node.target in STATIC_DEQUANTIZE and
                                                 is_constant_node(source, constants)):
        if not is_constant_node(source, constants):
            return "per-channel dequantize of a value that is not a constant weight"
        if node.target in DEQUANTIZE_PER_CHANNEL and not is_constant_node(node.args[2],
                                                                          constants):
            return "per-channel zero points are not constant"
        return None
    if node.target in QUANTIZE_PER_CHANNEL:
        return "per-channel quantization of activations is not supported"
    if node.target in DYNAMIC_QUANTIZE:
        dqs = [u for u in node.users if u.target in DYNAMIC_DEQUANTIZE]
        if len(dqs) != len(node.users) or not all(_feeds_only_linears(dq) for dq in dqs):
            return "dynamically quantized values are only delegated into linear layers"
        val = source.meta.get("val") if isinstance(source, torch.fx.Node) else None
        if not isinstance(val, torch.Tensor) or val.dtype != torch.float32:
            return "dynamic quantization of a non-float32 value"
        return None
    if node.target in DYNAMIC_DEQUANTIZE:
        if not (isinstance(source, torch.fx.Node) and source.target in DYNAMIC_QUANTIZE):
            return "dynamic dequantize of something other than a dynamic quantize"
        return unsupported_reason(source, constants)
    if node.target in STATIC_QUANTIZE:
        val = source.meta.get("val") if isinstance(source, torch.fx.Node) else None
        if not isinstance(val, torch.Tensor) or val.dtype != torch.float32:
            return "quantize of a non-float32 value"
        if any(not isinstance(s, int) for s in val.shape):
            return "quantize of a value with dynamic dims"
        return None
    if node.target in STATIC_DEQUANTIZE:
        if not (isinstance(source, torch.fx.Node) and source.target in STATIC_QUANTIZE):
            return "dequantize of a value that is not quantized in the graph"
        return None
    return "this quantization operator is not delegated"
