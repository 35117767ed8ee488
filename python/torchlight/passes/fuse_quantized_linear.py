"""fuse_quantized_linears: torchao's decomposed 8da4w linear becomes one
torchlight::linear_8da4w call on pre-packed weights; pt2e's static or
dynamic int8 linear, linear(dequantize_per_tensor(int8 x), dequantized
constant int8 weight), one torchlight::linear_qs8 call (an int8 x int8
product summed in int32); and the int8 weight-only linear, linear(x,
dequantize_per_channel(constant int8 weight [N, K], constant float32 scales
[N], zero or no zero points, axis 0)), one torchlight::linear_int8 call that
reads the int8 weight as stored (never dequantizing it whole); and the 4w
(int4 weight-only) linear, linear(x, dequantize_per_channel_group(constant
int4 weight)), one torchlight::linear_4w call on the packed weight (4 bits a
weight in the program). Inexact patterns stay decomposed."""

from __future__ import annotations

import operator
from typing import Optional, Tuple

import torch
import torch.fx

from torchlight.method_graph import MethodGraph

_qd = torch.ops.quantized_decomposed
_LINEAR = torch.ops.aten.linear.default


def _call(node, target) -> bool:
    return isinstance(node, torch.fx.Node) and node.op == "call_function" and \
        node.target is target


def _args(node, count):
    """node.args padded with its kwargs/defaults to `count` positional values."""
    args = list(node.args)
    for a in node.target._schema.arguments[len(args):count]:
        args.append(node.kwargs.get(a.name, a.default_value if a.has_default_value() else None))
    return args


def _int4_weight(w_dq, method: MethodGraph) -> Optional[Tuple]:
    """(weight placeholder, scales placeholder, group size) when `w_dq` is
    dequantize_per_channel_group(constant int8-stored int4 weight [N, K],
    constant float32 scales [N * K / G], zero or no zero points, -8, 7, int8,
    G, float32) with G an even divisor of K."""
    if not _call(w_dq, _qd.dequantize_per_channel_group.default):
        return None
    w, scales, zeros, qmin, qmax, dtype, group, out_dtype = _args(w_dq, 8)
    if (qmin, qmax, dtype, out_dtype) != (-8, 7, torch.int8, torch.float32):
        return None
    weight = method.constants.get(w)
    scale_values = method.constants.get(scales)
    if weight is None or scale_values is None or weight.dtype != torch.int8 or weight.dim() != 2:
        return None
    n, k = weight.shape
    if k % 2 or group % 2 or k % group or scale_values.dtype != torch.float32 or \
            scale_values.numel() != n * (k // group):
        return None
    if zeros is not None:
        zero_values = method.constants.get(zeros)
        if zero_values is None or bool(zero_values.any()):
            return None
    if bool((weight < -8).any() or (weight > 7).any()):
        return None
    return w, scales, group


def _match(linear: torch.fx.Node, method: MethodGraph) -> Optional[Tuple]:
    """(x, weight placeholder, scales placeholder, group size, bias) when
    `linear` is linear(dequantize_per_token(quantize_per_token(x, s, z), s, z),
    dequantized int4 weight (see _int4_weight)) with s, z from
    choose_qparams_per_token_asymmetric(x, int8), on float32 x."""
    x_dq, w_dq, bias = _args(linear, 3)
    if not _call(x_dq, _qd.dequantize_per_token.default):
        return None
    x_q, s, z, qmin, qmax, dtype, out_dtype = _args(x_dq, 7)
    if not _call(x_q, _qd.quantize_per_token.default) or (qmin, qmax, dtype, out_dtype) != \
            (-128, 127, torch.int8, torch.float32):
        return None
    x, s2, z2, qmin, qmax, dtype = _args(x_q, 6)
    if (s2, z2) != (s, z) or (qmin, qmax, dtype) != (-128, 127, torch.int8):
        return None
    if not (_call(s, operator.getitem) and _call(z, operator.getitem) and s.args[1] == 0 and
            z.args[1] == 1 and s.args[0] is z.args[0] and
            _call(s.args[0], _qd.choose_qparams_per_token_asymmetric.default) and
            s.args[0].args[0] is x and s.args[0].args[1] == torch.int8):
        return None
    val = x.meta.get("val")
    if not isinstance(val, torch.Tensor) or val.dtype != torch.float32:
        return None
    weight = _int4_weight(w_dq, method)
    if weight is None:
        return None
    return (x, *weight, bias)


def _match_4w(linear: torch.fx.Node, method: MethodGraph) -> Optional[Tuple]:
    """(x, weight placeholder, scales placeholder, group size, bias) when
    `linear` is linear(x, dequantized int4 weight (see _int4_weight)) on
    float32 x [..., K] with a float32 bias [N] or none: the 4w (int4
    weight-only) linear."""
    x, w_dq, bias = _args(linear, 3)
    weight = _int4_weight(w_dq, method)
    if weight is None:
        return None
    n, k = method.constants[weight[0]].shape
    val = x.meta.get("val") if isinstance(x, torch.fx.Node) else None
    if not isinstance(val, torch.Tensor) or val.dtype != torch.float32 or val.shape[-1] != k or \
            not _float_bias(bias, n):
        return None
    return (x, *weight, bias)


def _int8_weight(w_dq, method: MethodGraph) -> Optional[Tuple]:
    """(weight placeholder, scales: a placeholder of float32 [N] or a Python
    float) when `w_dq` dequantizes a constant int8 weight [N, K] symmetrically:
    dequantize_per_channel(weight, constant float32 scales [N], zero zero
    points, axis 0, int8, float32 out) or dequantize_per_tensor(weight, scale,
    0, ..., int8)."""
    if _call(w_dq, _qd.dequantize_per_tensor.default):
        w, scale, zero, _, _, dtype = _args(w_dq, 6)
        weight = method.constants.get(w)
        if weight is None or weight.dtype != torch.int8 or weight.dim() != 2 or \
                dtype != torch.int8 or zero != 0 or not isinstance(scale, float) or \
                w_dq.kwargs.get("out_dtype") not in (None, torch.float32):
            return None
        return w, scale
    if not _call(w_dq, _qd.dequantize_per_channel.default):
        return None
    w, scales, zeros, axis, _, _, dtype = _args(w_dq, 7)
    out_dtype = w_dq.kwargs.get("out_dtype")
    weight = method.constants.get(w)
    scale_values = method.constants.get(scales)
    if weight is None or scale_values is None or weight.dtype != torch.int8 or \
            weight.dim() != 2 or axis != 0 or dtype != torch.int8 or \
            out_dtype not in (None, torch.float32):
        return None
    n = weight.shape[0]
    if scale_values.dtype != torch.float32 or tuple(scale_values.shape) != (n,):
        return None
    if zeros is not None:
        zero_values = method.constants.get(zeros)
        if zero_values is None or bool(zero_values.any()):
            return None
    return w, scales


def _float_bias(bias, n: int) -> bool:
    if bias is None:
        return True
    val = bias.meta.get("val") if isinstance(bias, torch.fx.Node) else None
    return isinstance(val, torch.Tensor) and val.dtype == torch.float32 and val.numel() == n


def _match_int8(linear: torch.fx.Node, method: MethodGraph) -> Optional[Tuple]:
    """(x, weight placeholder, scales, bias) when `linear` is linear(x,
    dequantized symmetric int8 weight [N, K] (see _int8_weight)) on float32 x
    [..., K] with a float32 bias [N] or none."""
    x, w_dq, bias = _args(linear, 3)
    weight = _int8_weight(w_dq, method)
    if weight is None:
        return None
    w, scales = weight
    n, k = method.constants[w].shape
    val = x.meta.get("val") if isinstance(x, torch.fx.Node) else None
    if not isinstance(val, torch.Tensor) or val.dtype != torch.float32 or val.shape[-1] != k or \
            not _float_bias(bias, n):
        return None
    return x, w, scales, bias


def _match_qs8(linear: torch.fx.Node, method: MethodGraph) -> Optional[Tuple]:
    """(torchlight::linear_qs8 overload, its arguments with the scales still
    possibly a Python float) when `linear` is pt2e's quantized linear:
    linear(dequantize_per_tensor(int8 x, scale, zero point, int8) (scalars, or
    tensors as choose_qparams gives them), dequantized symmetric int8 weight
    (see _int8_weight), float32 bias or none)."""
    x_dq, w_dq, bias = _args(linear, 3)
    if _call(x_dq, _qd.dequantize_per_tensor.default):
        overload = torch.ops.torchlight.linear_qs8.default
    elif _call(x_dq, _qd.dequantize_per_tensor.tensor):
        overload = torch.ops.torchlight.linear_qs8.Tensor
    else:
        return None
    x_q, scale, zero_point, _, _, dtype = _args(x_dq, 6)
    val = x_q.meta.get("val") if isinstance(x_q, torch.fx.Node) else None
    if dtype != torch.int8 or not isinstance(val, torch.Tensor) or val.dtype != torch.int8 or \
            x_dq.kwargs.get("out_dtype") not in (None, torch.float32):
        return None
    weight = _int8_weight(w_dq, method)
    if weight is None:
        return None
    w, scales = weight
    n, k = method.constants[w].shape
    if val.shape[-1] != k or k > 65536 or not _float_bias(bias, n):
        return None
    return overload, (x_q, scale, zero_point, w, scales, bias)


def _scales_placeholder(method: MethodGraph, w: torch.fx.Node, scales) -> torch.fx.Node:
    """`scales` as a float32 [N] constant: a per-tensor weight scale (a Python
    float) repeated once per output column."""
    if isinstance(scales, torch.fx.Node):
        return scales
    value = torch.full((method.constants[w].shape[0],), scales, dtype=torch.float32)
    with method.graph.inserting_before(method.placeholder_insertion_point()):
        node = method.graph.placeholder(f"{w.name}_scales")
    node.meta["val"] = value
    method.constants[node] = value
    return node


def _fuse_int8(node: torch.fx.Node, method: MethodGraph) -> bool:
    import torchlight.kernels.fused_quantized  # noqa: F401  (defines torchlight::linear_*)
    qs8 = _match_qs8(node, method)
    if qs8 is not None:
        target, (x_q, scale, zero_point, w, scales, bias) = qs8
        args = (x_q, scale, zero_point, w, _scales_placeholder(method, w, scales), bias)
    else:
        match = _match_int8(node, method)
        if match is None:
            return False
        x, w, scales, bias = match
        target = torch.ops.torchlight.linear_int8.default
        args = (x, w, _scales_placeholder(method, w, scales), bias)
    with method.graph.inserting_before(node):
        fused = method.graph.call_function(target, args)
    fused.meta.update(node.meta)
    node.replace_all_uses_with(fused)
    method.graph.erase_node(node)
    return True


def fuse_quantized_linears(method: MethodGraph) -> MethodGraph:
    """Replaces every pt2e int8 linear (int8 activations quantized per tensor,
    see _match_qs8) by torchlight::linear_qs8(x_q, x_scale, x_zero_point,
    weight, scales, bias), which sums int8 products exactly in int32, every
    other int8 weight-only linear (see _match_int8) by
    torchlight::linear_int8(x, weight, scales, bias), every 8da4w linear (see _match) by
    torchlight::linear_8da4w(x, packed weight, scales, group size, bias),
    whose kernel quantizes x per token and multiplies with int32 sums, and
    every 4w linear (int4 weight-only, see _match_4w) by
    torchlight::linear_4w(x, packed weight, scales, group size, bias). The
    int4 weight constant is replaced by its packed form (uint8 [N, K/2], two
    values a byte, as embedding_4bit packs); the per-token chain and
    constants nothing else uses are removed.

    Afterwards no matched pattern remains; others are left as they are
    (their operators run on the quantized_decomposed kernels).
    """
    from torchlight.llm.quantize import pack_embedding_weight  # (heavy; only when fusing)
    import torchlight.kernels.fused_quantized  # noqa: F401  (defines torchlight::linear_4w)
    graph = method.graph
    packed_for = {}
    fused_any = False
    for node in list(graph.nodes):
        if not _call(node, _LINEAR):
            continue
        target = torch.ops.torchlight.linear_8da4w.default
        match = _match(node, method)
        if match is None:
            target = torch.ops.torchlight.linear_4w.default
            match = _match_4w(node, method)
        if match is None:
            fused_any = _fuse_int8(node, method) or fused_any
            continue
        x, w, scales, group, bias = match
        if w not in packed_for:
            weight = method.constants[w]
            with graph.inserting_before(method.placeholder_insertion_point()):
                packed = graph.placeholder(f"{w.name}_packed_int4")
            value = pack_embedding_weight(weight, 4)
            packed.meta["val"] = value
            method.constants[packed] = value
            packed_for[w] = packed
        scale_values = method.constants[scales]
        if scale_values.dim() != 2:  # the kernel reads [N, K / group]
            method.constants[scales] = scale_values.reshape(method.constants[w].shape[0], -1)
            scales.meta["val"] = method.constants[scales]
        with graph.inserting_before(node):
            fused = graph.call_function(target, (x, packed_for[w], scales, group, bias))
        fused.meta.update(node.meta)
        node.replace_all_uses_with(fused)
        graph.erase_node(node)
        fused_any = True
    if fused_any:
        _remove_dead(method)
        method.graph_module.recompile()
    return method


def _remove_dead(method: MethodGraph) -> None:
    """Erases pure computations and constant placeholders nobody uses."""
    graph = method.graph
    live = set(method.buffer_writes.values())
    for node in reversed(list(graph.nodes)):
        if node.users or node in live:
            continue
        if node.op == "call_function" and (
                node.target is operator.getitem or
                getattr(node.target, "namespace", None) == "quantized_decomposed"):
            graph.erase_node(node)
        elif node.op == "placeholder" and node in method.constants:
            del method.constants[node]
            graph.erase_node(node)
