"""fuse_quantized_linears: quantized LLM linears become one fused call.

Two decomposed patterns (the graphs torchlight.llm.quantize and torchao
export) are rewritten, only when they match exactly:

  8da4w  linear(dequantize_per_token(quantize_per_token(x, s, zp, -128, 127,
         int8), s, zp, ...), dequantize_per_channel_group(W, S, Z, -8, 7, int8,
         G, float32), bias), with (s, zp) = choose_qparams_per_token_asymmetric(x,
         int8), W a constant int8 [N, K] in -8..7, S a constant float32
         [N, K / G], Z absent or a constant of zeros, G even and dividing K
      -> torchlight::linear_8da4w(x, W packed two a byte (a new constant), S, G, bias)
  int8   linear(x, dequantize_per_channel(W, S, Z, 0, qmin, qmax, int8,
         out_dtype=float32), bias), W a constant int8 [N, K], S a constant
         float32 [N], Z absent or zeros
      -> torchlight::linear_int8(x, W, S, bias)

x and bias are float32. Anything else (asymmetric weights, other dtypes,
weights computed at run time) stays decomposed. The operators are defined
in torchlight.kernels.fused_quantized; their kernels read the weights as
stored, so a decode step never dequantizes a whole weight matrix. Nodes and
constants left unused are removed. ExecutorchBackendConfig
(fuse_quantized_linears=False) turns the pass off.
"""

from __future__ import annotations

import operator
from typing import Any, Dict, Optional

import torch
import torch.fx

from torchlight.kernels import fused_quantized
from torchlight.method_graph import MethodGraph

qd = torch.ops.quantized_decomposed


def _arguments(node: torch.fx.Node) -> Dict[str, Any]:
    """The node's arguments by schema name, defaults filled in."""
    bound = {}
    for i, arg in enumerate(node.target._schema.arguments):
        if i < len(node.args) and not arg.kwarg_only:
            bound[arg.name] = node.args[i]
        elif arg.name in node.kwargs:
            bound[arg.name] = node.kwargs[arg.name]
        elif arg.has_default_value():
            bound[arg.name] = arg.default_value
    return bound


def _is_call(node: Any, target) -> bool:
    return isinstance(node, torch.fx.Node) and node.op == "call_function" and node.target == target


def _val(node: Any) -> Optional[torch.Tensor]:
    val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return val if isinstance(val, torch.Tensor) else None


def _is_float32(node: Any) -> bool:
    val = _val(node)
    return val is not None and val.dtype == torch.float32


def _constant(method: MethodGraph, node: Any) -> Optional[torch.Tensor]:
    return method.constants.get(node) if isinstance(node, torch.fx.Node) else None


def _zero_or_absent(method: MethodGraph, node: Any) -> bool:
    if node is None:
        return True
    zeros = _constant(method, node)
    return zeros is not None and not bool(zeros.any())


def _bias_ok(bias: Any, n: int) -> bool:
    return bias is None or (_is_float32(bias) and _val(bias).numel() == n)


def _per_token_source(node: Any) -> Optional[torch.fx.Node]:
    """x when node is dequantize_per_token(quantize_per_token(x, s, zp)) of
    int8 in -128..127 with (s, zp) = choose_qparams_per_token_asymmetric(x, int8)."""
    if not _is_call(node, qd.dequantize_per_token.default):
        return None
    dq = _arguments(node)
    quant = dq["input"]
    if not _is_call(quant, qd.quantize_per_token.default):
        return None
    q = _arguments(quant)
    int8_range = (-128, 127, torch.int8)
    if (q["quant_min"], q["quant_max"], q["dtype"]) != int8_range or \
            (dq["quant_min"], dq["quant_max"], dq["dtype"]) != int8_range or \
            dq["output_dtype"] != torch.float32:
        return None
    if q["scales"] is not dq["scales"] or q["zero_points"] is not dq["zero_points"]:
        return None
    scale, zero_point = q["scales"], q["zero_points"]
    if not (_is_call(scale, operator.getitem) and _is_call(zero_point, operator.getitem)):
        return None
    choose = scale.args[0]
    if scale.args[1] != 0 or zero_point.args != (choose, 1) or \
            not _is_call(choose, qd.choose_qparams_per_token_asymmetric.default):
        return None
    x = choose.args[0]
    if _arguments(choose)["dtype"] != torch.int8 or q["input"] is not x or not _is_float32(x):
        return None
    return x


class _Fuser:
    def __init__(self, method: MethodGraph):
        self.method = method
        self.packed: Dict[torch.fx.Node, torch.fx.Node] = {}

    def packed_weight(self, weight: torch.fx.Node) -> torch.fx.Node:
        """A constant holding `weight` packed two int4 values a byte (shared
        by every linear that reads the same weight)."""
        if weight not in self.packed:
            graph = self.method.graph
            with graph.inserting_before(self.method.placeholder_insertion_point()):
                node = graph.placeholder(f"{weight.name}_packed_int4")
            tensor = fused_quantized.pack_int4(self.method.constants[weight])
            node.meta["val"] = tensor
            self.method.constants[node] = tensor
            self.packed[weight] = node
        return self.packed[weight]

    def try_8da4w(self, linear: torch.fx.Node, x_dq: Any, w_dq: Any, bias: Any):
        if not _is_call(w_dq, qd.dequantize_per_channel_group.default):
            return None
        x = _per_token_source(x_dq)
        if x is None:
            return None
        a = _arguments(w_dq)
        weight = _constant(self.method, a["input"])
        scales = _constant(self.method, a["scales"])
        group = a["group_size"]
        if weight is None or scales is None or weight.dtype != torch.int8 or weight.dim() != 2:
            return None
        n, k = weight.shape
        if (a["quant_min"], a["quant_max"], a["dtype"], a["output_dtype"]) != \
                (-8, 7, torch.int8, torch.float32):
            return None
        if not isinstance(group, int) or group < 2 or group % 2 or k % group or \
                _val(x).shape[-1] != k:
            return None
        if scales.dtype != torch.float32 or tuple(scales.shape) != (n, k // group) or \
                not _zero_or_absent(self.method, a["zero_points"]) or not _bias_ok(bias, n):
            return None
        if int(weight.min()) < -8 or int(weight.max()) > 7:
            return None
        return (fused_quantized.linear_8da4w,
                (x, self.packed_weight(a["input"]), a["scales"], group, bias))

    def try_int8(self, linear: torch.fx.Node, x: Any, w_dq: Any, bias: Any):
        if not _is_call(w_dq, qd.dequantize_per_channel.default) or not _is_float32(x):
            return None
        a = _arguments(w_dq)
        weight = _constant(self.method, a["input"])
        scales = _constant(self.method, a["scales"])
        if weight is None or scales is None or weight.dtype != torch.int8 or weight.dim() != 2:
            return None
        n, k = weight.shape
        if a["axis"] != 0 or a["dtype"] != torch.int8 or \
                a["out_dtype"] not in (None, torch.float32) or _val(x).shape[-1] != k:
            return None
        if scales.dtype != torch.float32 or tuple(scales.shape) != (n,) or \
                not _zero_or_absent(self.method, a["zero_points"]) or not _bias_ok(bias, n):
            return None
        return fused_quantized.linear_int8, (x, a["input"], a["scales"], bias)

    def remove_unused(self, candidates) -> None:
        graph = self.method.graph
        pending = list(candidates)
        while pending:
            node = pending.pop()
            if node.graph is not graph or node.users or node.op not in ("call_function",
                                                                       "placeholder"):
                continue
            if node.op == "placeholder":
                if node not in self.method.constants:
                    continue
                del self.method.constants[node]
            inputs = list(node.all_input_nodes)
            graph.erase_node(node)
            pending.extend(inputs)


def fuse_quantized_linears(method: MethodGraph) -> MethodGraph:
    """Rewrites the 8da4w and int8 weight-only linear patterns (module doc)
    into torchlight::linear_8da4w / torchlight::linear_int8."""
    fuser = _Fuser(method)
    graph = method.graph
    replaced = []
    for node in list(graph.nodes):
        if not _is_call(node, torch.ops.aten.linear.default):
            continue
        args = _arguments(node)
        x, w, bias = args["input"], args["weight"], args.get("bias")
        fused = fuser.try_8da4w(node, x, w, bias) or fuser.try_int8(node, x, w, bias)
        if fused is None:
            continue
        op, op_args = fused
        with graph.inserting_before(node):
            call = graph.call_function(op, op_args)
        call.meta.update(node.meta)
        node.replace_all_uses_with(call)
        replaced.append(node)
    for node in replaced:
        inputs = list(node.all_input_nodes)
        graph.erase_node(node)
        fuser.remove_unused(inputs)
    method.graph_module.recompile()
    return method
