"""torch.export of a cached LLM as one method with a dynamic sequence length.

One method serves both phases: prefill calls it with the prompt (T tokens at
positions 0..T-1), decode with T = 1. Both share the same cache buffers, which
a program with separate prefill and decode methods could not do (each method
would plan its own copy of the mutable buffers).

    forward(tokens [1, T] int64, input_pos [T] int64) -> logits [1, T, vocab]
    1 <= T <= max_seq_len; the caches are mutated buffers of the program.
"""

from __future__ import annotations

from typing import Optional

import torch
from torch import nn
from torch.export import Dim, ExportedProgram


def _upstream_layout(model: nn.Module) -> bool:
    return bool(getattr(getattr(model, "config", None), "upstream_layout", False))


def example_inputs(model: nn.Module, seq_len: int = 4, use_kv_cache: bool = True):
    """(tokens [1, seq_len], input_pos) for tracing: input_pos [seq_len]
    (our layout) or [1] = the start position (upstream's); (tokens,) alone
    without a KV cache."""
    seq_len = min(seq_len, model.max_seq_len)
    tokens = torch.zeros((1, seq_len), dtype=torch.long)
    if not use_kv_cache:
        return (tokens,)
    if _upstream_layout(model):
        return (tokens, torch.zeros((1,), dtype=torch.long))
    return (tokens, torch.arange(seq_len, dtype=torch.long))


def dynamic_shapes(model: nn.Module, use_kv_cache: bool = True):
    """The sequence dim of tokens (and of input_pos in our layout): one
    symbol, 1..max_seq_len."""
    seq = Dim("seq_len", min=1, max=model.max_seq_len)
    if not use_kv_cache:
        return {"tokens": {1: seq}}
    if _upstream_layout(model):
        return {"tokens": {1: seq}, "input_pos": None}
    return {"tokens": {1: seq}, "input_pos": {0: seq}}


def export_llm(model: nn.Module, example_len: int = 4, qmode: Optional[str] = None,
               group_size: int = 128, embedding_quantize: Optional[str] = None,
               last_logits_only: bool = False, use_kv_cache: bool = True,
               fuse_linears: bool = False) -> ExportedProgram:
    """The model's cached forward, exported with a dynamic sequence length.

    The model is put in eval mode and its caches are zeroed first, so the
    exported buffers start empty. example_len (>= 2: torch.export specialises
    sizes 0 and 1) only sets the traced example. `qmode` ("8da4w", "int8",
    "4w"), `group_size` and `embedding_quantize` ("bits,group") quantize
    `model` in place first (torchlight.llm.quantize.quantize_model, upstream's
    -qmode / -G / -E). fuse_linears (a Llama) first fuses each block's
    wq/wk/wv and w1/w3 into one linear each, in place
    (torchlight.llm.fuse_linears), before any quantization. With last_logits_only (for models with that
    attribute: our GPT and Llama), forward returns the last position's logits
    [1, 1, vocab], all generation needs: prefill then runs the classifier on
    one position instead of T. Without use_kv_cache, forward(tokens) attends
    over the tokens it is given (the runner re-feeds the whole sequence).
    A model whose config has upstream_layout exports upstream's
    forward(tokens [1, T], input_pos [1]) (upstream_attention.py).
    """
    if example_len < 2:
        raise ValueError(f"export_llm: example_len must be >= 2, got {example_len}")
    if last_logits_only and not hasattr(model, "last_logits_only"):
        raise ValueError(f"export_llm: {type(model).__name__} has no last_logits_only switch")
    if fuse_linears:
        from torchlight.llm.fuse_linears import fuse_linears as fuse
        fuse(model)
    if qmode is not None or embedding_quantize:
        from torchlight.llm.quantize import quantize_model
        quantize_model(model, qmode, group_size, embedding_quantize)
    model.eval()
    model.reset_cache()
    saved = getattr(model, "last_logits_only", False)
    if hasattr(model, "last_logits_only"):
        model.last_logits_only = last_logits_only
    try:
        with torch.no_grad():
            ep = torch.export.export(model, example_inputs(model, example_len, use_kv_cache),
                                     dynamic_shapes=dynamic_shapes(model, use_kv_cache))
            return _drop_scalar_asserts(ep)
    finally:
        if hasattr(model, "last_logits_only"):
            model.last_logits_only = saved


_ASSERT_OPS = (torch.ops.aten._assert_scalar.default,
               torch.ops.aten.sym_constrain_range_for_size.default,
               torch.ops.aten.sym_constrain_range.default)


def _drop_scalar_asserts(ep: ExportedProgram) -> ExportedProgram:
    """Removes the run-time checks torch.export adds for a data-dependent
    start position (input_pos[0].item() in upstream's layout): they have no
    result to lower, and the runtime checks positions itself (set_input's
    bounds, the attention kernels' start_pos checks)."""
    graph = ep.graph_module.graph
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target in _ASSERT_OPS and not node.users:
            graph.erase_node(node)
    graph.eliminate_dead_code()
    ep.graph_module.recompile()
    return ep
