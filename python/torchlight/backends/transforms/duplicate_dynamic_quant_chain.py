"""DuplicateDynamicQuantChainPass: one dynamic quantization chain per consumer.

PyTorch's pt2e flow with a dynamic quantizer writes, for an activation that
feeds several quantized operators (q, k and v projections of one input),
one chain

    choose_qparams.tensor -> getitem(0), getitem(1) -> quantize_per_tensor.tensor
        -> dequantize_per_tensor.tensor -> linear_q, linear_k, linear_v

A partitioner or a fusing kernel sees the pattern `linear(dequantize(...))`
only when each consumer has its chain of its own, so this pass copies the
chain per consumer, as upstream ExecuTorch's pass of the same name does:

    choose_qparams -> getitems -> quantize -> dequantize -> linear_q
    choose_qparams -> getitems -> quantize -> dequantize -> linear_k   (copies)
    ...

Run it on the GraphModule convert_pt2e returns, before torch.export:

    m = convert_pt2e(prepared)
    DuplicateDynamicQuantChainPass()(m)
    ep = torch.export.export(m, inputs)

It computes the same values (each copy recomputes the same parameters from
the same input); static chains and chains with one consumer are left alone.
"""

from __future__ import annotations

import operator
from typing import List

import torch
import torch.fx
from torch.fx.passes.infra.pass_base import PassBase, PassResult

import torchlight.kernels.quantized  # noqa: F401  (registers quantized_decomposed)

_qd = torch.ops.quantized_decomposed
_CHOOSE_QPARAMS = (_qd.choose_qparams.tensor,)
_QUANTIZE = (_qd.quantize_per_tensor.tensor, _qd.quantize_per_tensor.default,
             _qd.quantize_per_channel.default)
_DEQUANTIZE = (_qd.dequantize_per_tensor.tensor, _qd.dequantize_per_tensor.default,
               _qd.dequantize_per_channel.default)
_SYM_SIZE = (torch.ops.aten.sym_size.int,)


def _is_call(node, targets) -> bool:
    return isinstance(node, torch.fx.Node) and node.op == "call_function" and \
        node.target in targets


def _consumers(node: torch.fx.Node) -> List[torch.fx.Node]:
    """Users of `node` other than size queries (those read only its shape)."""
    return [u for u in node.users if not _is_call(u, _SYM_SIZE)]


def _dynamic_chain(dq: torch.fx.Node):
    """(choose_qparams, scale getitem, zero-point getitem, quantize) when
    `dq` ends a dynamic chain whose nodes feed only this chain; else None."""
    q = dq.args[0]
    if not _is_call(q, _QUANTIZE) or len(q.users) != 1:
        return None
    scale, zero_point = q.args[1], q.args[2]
    if not (_is_call(scale, (operator.getitem,)) and _is_call(zero_point, (operator.getitem,))):
        return None
    choose = scale.args[0]
    if not _is_call(choose, _CHOOSE_QPARAMS) or zero_point.args[0] is not choose:
        return None
    for getitem in (scale, zero_point):
        if any(u not in (q, dq) for u in getitem.users):
            return None
    return choose, scale, zero_point, q


class DuplicateDynamicQuantChainPass(PassBase):
    """Gives every consumer of a dynamically quantized value its own
    choose_qparams -> quantize -> dequantize chain (see the module doc).
    Afterwards every dynamic dequantize has exactly one non-size user."""

    def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
        graph = graph_module.graph
        modified = False
        for dq in list(graph.nodes):
            if not _is_call(dq, _DEQUANTIZE):
                continue
            consumers = _consumers(dq)
            chain = _dynamic_chain(dq) if len(consumers) > 1 else None
            if chain is None:
                continue
            choose, scale, zero_point, q = chain
            for consumer in consumers[1:]:
                with graph.inserting_before(consumer):
                    copies = {}
                    for original in (choose, scale, zero_point, q, dq):
                        copies[original] = graph.node_copy(
                            original, lambda n: copies.get(n, n))
                consumer.replace_input_with(dq, copies[dq])
            modified = True
        if modified:
            graph.lint()
            graph_module.recompile()
        return PassResult(graph_module, modified)
