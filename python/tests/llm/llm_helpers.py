"""Tiny model configurations shared by the LLM tests."""

from __future__ import annotations

import torch

from torchlight.llm import GPT, GPTConfig, Llama, LlamaConfig

VOCAB = 61
MAX_SEQ = 24


def tiny_gpt(use_custom_op: bool = True, seed: int = 0, **kw) -> GPT:
    torch.manual_seed(seed)
    fields = dict(block_size=MAX_SEQ, vocab_size=VOCAB, n_layer=2, n_head=4, n_embd=32,
                  use_custom_op=use_custom_op)
    fields.update(kw)
    return _randomize(GPT(GPTConfig(**fields))).eval()


def tiny_llama(use_custom_op: bool = True, seed: int = 0, **kw) -> Llama:
    """Grouped-query attention: 4 query heads share 2 key/value heads."""
    torch.manual_seed(seed)
    fields = dict(dim=32, hidden_dim=72, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=VOCAB,
                  max_seq_len=MAX_SEQ, use_custom_op=use_custom_op)
    fields.update(kw)
    return _randomize(Llama(LlamaConfig(**fields))).eval()


def _randomize(model):
    """Larger-than-init weights (norm gains and biases too), so attention
    patterns are sharp and mistakes show in the logits."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                p.normal_(0.0, 0.1)
            elif p.dim() == 1:
                p.uniform_(0.5, 1.5)
            else:
                p.normal_(0.0, 0.3)
    return model


ARCHES = {"gpt": tiny_gpt, "llama": tiny_llama}
