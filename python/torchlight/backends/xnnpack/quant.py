"""Quantize/dequantize nodes (quantized_decomposed ops) as the XNNPACK
delegate sees them: PyTorch's pt2e flow, and the LLM 8da4w linear
(per-token dynamic int8 activations, group-wise 4-bit weights) that
torchlight.llm.quantize writes as torchao does."""

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
# torchao's 8da4w linear (torchlight.llm.quantize): per-token dynamic int8
# activations, group-wise 4-bit weights.
CHOOSE_QPARAMS_PER_TOKEN = _ops("choose_qparams_per_token_asymmetric")
QUANTIZE_PER_TOKEN = _ops("quantize_per_token")
DEQUANTIZE_PER_TOKEN = _ops("dequantize_per_token")
DEQUANTIZE_PER_CHANNEL_GROUP = _ops("dequantize_per_channel_group")
PER_TOKEN = CHOOSE_QPARAMS_PER_TOKEN + QUANTIZE_PER_TOKEN + DEQUANTIZE_PER_TOKEN
QUANTIZE = QUANTIZE_PER_TENSOR + QUANTIZE_PER_CHANNEL
DEQUANTIZE = DEQUANTIZE_PER_TENSOR + DEQUANTIZE_PER_CHANNEL + DEQUANTIZE_PER_CHANNEL_GROUP
QDQ = QUANTIZE + DEQUANTIZE + CHOOSE_QPARAMS + PER_TOKEN

# XNNPACK's blockwise (qb4w) fully-connected takes blocks of a multiple of 32
# input channels.
BLOCK_MULTIPLE = 32


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


def _arg(node: torch.fx.Node, index: int, name: str, default=None):
    if len(node.args) > index:
        return node.args[index]
    return node.kwargs.get(name, default)


def _float32(node) -> bool:
    val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return isinstance(val, torch.Tensor) and val.dtype == torch.float32


def _all_zero(node, constants) -> bool:
    """A constant of zeros (or None): symmetric weights."""
    if node is None:
        return True
    if not is_constant_node(node, constants):
        return False
    value = constants.get(node.name) if isinstance(constants, dict) else None
    return value is None or not bool(torch.as_tensor(value).any())


def _constant_value(node, constants):
    return constants.get(node.name) if isinstance(constants, dict) and \
        isinstance(node, torch.fx.Node) else None


def weight_kind(dq: torch.fx.Node, constants) -> tuple:
    """("qb4w" | "qc4w" | "qc8w", None) for a weight dequantize XNNPACK's
    dynamically quantized fully-connected takes, else (None, reason)."""
    if dq.target in DEQUANTIZE_PER_CHANNEL_GROUP:
        weight, scales, zeros = dq.args[:3]
        qmin, qmax, dtype = dq.args[3:6]
        group = _arg(dq, 6, "group_size")
        out_dtype = _arg(dq, 7, "output_dtype", torch.float32)
        if (qmin, qmax, dtype) != (-8, 7, torch.int8):
            return None, (f"group-wise weights in [{qmin}, {qmax}] ({dtype}); XNNPACK's "
                          f"blockwise weights are 4-bit values in [-8, 7]")
        if out_dtype != torch.float32:
            return None, f"group-wise dequantize to {out_dtype}; XNNPACK takes float32"
    elif dq.target in DEQUANTIZE_PER_CHANNEL:
        weight, scales, zeros, axis, qmin, qmax, dtype = dq.args[:7]
        if axis != 0:
            return None, f"per-channel weights quantized along dim {axis}, not 0"
        if dtype != torch.int8 or qmin < -128 or qmax > 127:
            return None, f"per-channel weights in [{qmin}, {qmax}] ({dtype}) are not int8"
        group = None
    else:
        return None, "the weight is not dequantized per channel or per group"
    if not (is_constant_node(weight, constants) and is_constant_node(scales, constants)):
        return None, "the quantized weight or its scales are not constants"
    val = weight.meta.get("val")
    if not isinstance(val, torch.Tensor) or val.dtype != torch.int8 or val.dim() != 2:
        return None, "the quantized weight is not a 2-D int8 tensor"
    if not _all_zero(zeros, constants):
        return None, "the weight has non-zero zero points; XNNPACK takes symmetric weights"
    four_bit = qmin >= -8 and qmax <= 7
    value = _constant_value(weight, constants)
    if four_bit and value is not None and bool(((value < -8) | (value > 7)).any()):
        return None, "the 4-bit weight holds values outside [-8, 7]"
    in_features = val.shape[1]
    if group is None:
        return ("qc4w" if four_bit else "qc8w"), None
    if not isinstance(group, int) or group <= 0 or in_features % group:
        return None, f"group size {group} does not divide the {in_features} input channels"
    if group % BLOCK_MULTIPLE == 0:
        return "qb4w", None
    if group == in_features:
        return "qc4w", None  # One group a row: per-channel 4-bit (any width).
    return None, (f"group size {group}: XNNPACK's blockwise 4-bit weights need a multiple "
                  f"of {BLOCK_MULTIPLE}")


def per_token_source(dq: torch.fx.Node):
    """x of dequantize_per_token(quantize_per_token(x, s, z), s, z) with s, z
    from choose_qparams_per_token_asymmetric(x, int8), all int8 [-128, 127]
    to float32; else None."""
    if not (isinstance(dq, torch.fx.Node) and dq.target in DEQUANTIZE_PER_TOKEN):
        return None
    q, scales, zeros, qmin, qmax, dtype = dq.args[:6]
    if (qmin, qmax, dtype) != (-128, 127, torch.int8) or \
            _arg(dq, 6, "output_dtype", torch.float32) != torch.float32:
        return None
    if not (isinstance(q, torch.fx.Node) and q.target in QUANTIZE_PER_TOKEN) or \
            tuple(q.args[1:6]) != (scales, zeros, -128, 127, torch.int8):
        return None
    x = q.args[0]
    choose = getattr(scales, "args", (None,))[0]
    if not (scales.target is operator.getitem and zeros.target is operator.getitem and
            scales.args[1] == 0 and zeros.args[1] == 1 and zeros.args[0] is choose and
            isinstance(choose, torch.fx.Node) and choose.target in CHOOSE_QPARAMS_PER_TOKEN and
            choose.args[0] is x and _arg(choose, 1, "dtype") == torch.int8):
        return None
    return x if _float32(x) else None


def _per_token_reason(choose: torch.fx.Node, constants) -> Optional[str]:
    """Whether the whole per-token chain from `choose` (choose_qparams ->
    quantize -> dequantize -> linear input) runs as XNNPACK's qd8 convert:
    every dequantize feeds only linears whose weights XNNPACK takes."""
    dqs = []
    for item in choose.users:
        for user in item.users:
            if user.target in DEQUANTIZE_PER_TOKEN:
                dqs.append(user)
            elif user.target in QUANTIZE_PER_TOKEN:
                dqs.extend(user.users)
            else:
                return "the per-token qparams feed something other than quantize/dequantize"
    if not dqs:
        return "the per-token qparams are unused"
    for dq in set(dqs):
        if per_token_source(dq) is None:
            return "not the per-token asymmetric int8 pattern (choose_qparams -> quantize -> " \
                   "dequantize) XNNPACK's dynamic quantization computes"
        if not _feeds_only_linears(dq):
            return "per-token quantized values are only delegated into linear layers"
        for linear in dq.users:
            weight = linear.args[1]
            if not (isinstance(weight, torch.fx.Node) and weight.target in DEQUANTIZE):
                return "the linear's weight is float; only quantized weights take qd8 inputs"
            kind, reason = weight_kind(weight, constants)
            if reason:
                return reason
    return None


def _per_token_op_reason(node: torch.fx.Node, constants) -> Optional[str]:
    if node.target in CHOOSE_QPARAMS_PER_TOKEN:
        return _per_token_reason(node, constants)
    if node.target in QUANTIZE_PER_TOKEN:
        source = node.args[1]
    else:  # dequantize_per_token
        source = node.args[0].args[1] if isinstance(node.args[0], torch.fx.Node) and \
            node.args[0].args else None
    choose = getattr(source, "args", (None,))[0]
    if not (isinstance(source, torch.fx.Node) and source.target is operator.getitem and
            isinstance(choose, torch.fx.Node) and choose.target in CHOOSE_QPARAMS_PER_TOKEN):
        return "per-token quantization with qparams not from choose_qparams_per_token_asymmetric"
    return _per_token_reason(choose, constants)


def _group_weight_reason(node: torch.fx.Node, constants) -> Optional[str]:
    """A group-wise weight dequantize: XNNPACK only takes it as the weight of
    a linear whose input is per-token quantized (qd8-f32-qb4w)."""
    kind, reason = weight_kind(node, constants)
    if reason:
        return reason
    linear = torch.ops.aten.linear.default
    for user in node.users:
        if user.target is not linear or user.args[1] is not node or len(user.args) < 2:
            return "group-wise weights are only delegated as a linear's weight"
        if per_token_source(user.args[0]) is None:
            return ("4-bit group-wise weights are only delegated with per-token dynamically "
                    "quantized activations (8da4w); XNNPACK has no float-input blockwise linear")
    return None


def unsupported_reason(node: torch.fx.Node, constants: Set[str]):
    """NOT_QUANT for nodes other than q/dq; else None or a reason.

    Static per-tensor int8 q/dq of activations, per-tensor or per-channel
    dq of int8 constant weights, and the dynamic pattern choose_qparams ->
    quantize.tensor -> dequantize.tensor -> linear are delegated."""
    if node.target is operator.getitem:
        source = node.args[0]
        if isinstance(source, torch.fx.Node) and source.target in CHOOSE_QPARAMS + \
                CHOOSE_QPARAMS_PER_TOKEN:
            return unsupported_reason(source, constants)
        return NOT_QUANT
    if node.target not in QDQ:
        return NOT_QUANT
    if node.target in PER_TOKEN:
        return _per_token_op_reason(node, constants)
    if node.target in DEQUANTIZE_PER_CHANNEL_GROUP:
        return _group_weight_reason(node, constants)
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
