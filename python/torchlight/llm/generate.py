"""Token generation with the KV cache: the reference a C++ runner must match.

The loop is the one a runner runs: one prefill call with the whole prompt at
positions 0..P-1, then one decode call per new token at the next position.
With temperature 0 the next token is the argmax (ties go to the lowest id, as
torch.argmax does), so greedy output is deterministic.
"""

from __future__ import annotations

from typing import Callable, List, Optional, Sequence

import torch
from torch import nn


@torch.no_grad()
def generate(model: nn.Module, prompt: Sequence[int], max_new_tokens: int,
             temperature: float = 0.0, top_k: Optional[int] = None,
             generator: Optional[torch.Generator] = None,
             stop_token: Optional[int] = None,
             on_token: Optional[Callable[[int], None]] = None) -> List[int]:
    """Returns the new token ids (without the prompt).

    `model` is a GPT or Llama (or anything with forward(tokens [1, T],
    input_pos [T]) -> logits [1, T, V], reset_cache() and max_seq_len); a
    Llama in upstream's layout gets input_pos [1], the start position.
    Generation stops after `max_new_tokens`, at `stop_token` (included), or
    when the cache is full. temperature 0 is greedy; otherwise logits /
    temperature, optionally restricted to the top_k, are sampled with
    `generator`.
    """
    if len(prompt) == 0:
        raise ValueError("generate: the prompt is empty; it needs at least one token")
    if len(prompt) > model.max_seq_len:
        raise ValueError(f"generate: prompt of {len(prompt)} tokens does not fit the cache of "
                         f"{model.max_seq_len} positions")
    was_training = model.training
    model.eval()
    model.reset_cache()
    tokens = torch.tensor([list(prompt)], dtype=torch.long)
    # Upstream's layout (LlamaConfig.upstream_layout) takes the start position only.
    upstream = getattr(getattr(model, "config", None), "upstream_layout", False)
    pos = (torch.zeros(1, dtype=torch.long) if upstream
           else torch.arange(len(prompt), dtype=torch.long))
    out: List[int] = []
    try:
        logits = model(tokens, pos)[0, -1]
        next_pos = len(prompt)
        while len(out) < max_new_tokens:
            token = _pick(logits, temperature, top_k, generator)
            out.append(token)
            if on_token is not None:
                on_token(token)
            if token == stop_token or next_pos >= model.max_seq_len:
                break
            logits = model(torch.tensor([[token]], dtype=torch.long),
                           torch.tensor([next_pos], dtype=torch.long))[0, -1]
            next_pos += 1
    finally:
        model.train(was_training)
    return out


def _pick(logits: torch.Tensor, temperature: float, top_k: Optional[int],
          generator: Optional[torch.Generator]) -> int:
    if temperature <= 0.0:
        return int(torch.argmax(logits).item())
    logits = logits / temperature
    if top_k is not None and top_k < logits.numel():
        kth = torch.topk(logits, top_k).values[-1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = torch.softmax(logits, dim=-1)
    return int(torch.multinomial(probs, 1, generator=generator).item())
