"""Sibling-linear fusion: the linears of a Llama block that read the same
input become one linear each, so a token runs 4 linears a layer instead of 7.

    attention.wq, wk, wv   -> attention.wqkv  [(Hq + 2 Hkv) * D, dim]  rows q, k, v
    feed_forward.w1, w3    -> feed_forward.w13 [2 * hidden, dim]       rows w1 (gate), w3 (up)

The weights are concatenated on the output dimension and the forward splits
the result (Attention / FeedForward in llama.py), so every output element is
the same dot product of the same row with the same input: the fused model
computes what the separate linears did. Quantization afterwards
(quantize.py) sees one nn.Linear: int8's per-channel and 8da4w / 4w's
per-group scales are per output row, so the fused weight quantizes to the
separate weights' values and scales stacked, and 8da4w quantizes the shared
activation once instead of three (two) times.

Fuse after loading a checkpoint (its names are the separate linears') and
before quantizing. A torchlight extension: upstream ExecuTorch's
export_llama keeps the separate linears.
"""

from __future__ import annotations

import torch
from torch import nn


def concat_linears(*linears: nn.Linear) -> nn.Linear:
    """One nn.Linear whose output is the given linears' outputs concatenated
    in order (weights and biases stacked on the output dimension). Raises
    ValueError when they are not float nn.Linears of one input width, dtype
    and bias presence (a quantized model: fuse before quantizing)."""
    for linear in linears:
        if type(linear) is not nn.Linear:
            raise ValueError(f"fuse_linears: cannot fuse a {type(linear).__name__}; only "
                             f"nn.Linear (fuse before quantizing)")
    first = linears[0]
    has_bias = first.bias is not None
    for linear in linears[1:]:
        if linear.in_features != first.in_features or \
                linear.weight.dtype != first.weight.dtype or \
                (linear.bias is not None) != has_bias:
            raise ValueError(f"fuse_linears: linears of different input widths, dtypes or bias "
                             f"({first.in_features} / {first.weight.dtype} against "
                             f"{linear.in_features} / {linear.weight.dtype})")
    fused = nn.Linear(first.in_features, sum(l.out_features for l in linears), bias=has_bias,
                      dtype=first.weight.dtype, device=first.weight.device)
    with torch.no_grad():
        fused.weight.copy_(torch.cat([l.weight for l in linears], dim=0))
        if has_bias:
            fused.bias.copy_(torch.cat([l.bias for l in linears], dim=0))
    fused.train(first.training)
    return fused


def fuse_linears(model: nn.Module) -> nn.Module:
    """Fuses, in place, every block's wq/wk/wv into wqkv and w1/w3 into w13
    (see the module doc); blocks already fused are left as they are.
    Returns `model`. Raises ValueError for a model without Llama blocks or
    with linears already quantized."""
    from torchlight.llm.llama import Attention, FeedForward

    found = False
    for module in model.modules():
        if isinstance(module, Attention):
            found = True
            if not module.fused:
                module.wqkv = concat_linears(module.wq, module.wk, module.wv)
                del module.wq, module.wk, module.wv
                module.fused = True
        elif isinstance(module, FeedForward):
            found = True
            if not module.fused:
                module.w13 = concat_linears(module.w1, module.w3)
                del module.w1, module.w3
                module.fused = True
    if not found:
        raise ValueError(f"fuse_linears: {type(model).__name__} has no Llama attention or "
                         f"feed-forward blocks to fuse")
    return model
