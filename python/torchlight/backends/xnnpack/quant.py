"""Quantize/dequantize nodes of PyTorch's pt2e flow (quantized_decomposed
ops) as the XNNPACK delegate sees them."""

from __future__ import annotations

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


def unsupported_reason(node: torch.fx.Node, constants: Set[str]):
    """NOT_QUANT for nodes other than q/dq; else None or a reason."""
    if node.target not in QDQ:
        return NOT_QUANT
    return "quantized graphs are not delegated yet"
