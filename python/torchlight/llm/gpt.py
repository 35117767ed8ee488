"""GPT-2 (nanoGPT layout) with a static KV cache.

Parameter names are nanoGPT's, so a nanoGPT state dict loads as it is:

    transformer.wte.weight            [vocab_size, n_embd]
    transformer.wpe.weight            [block_size, n_embd]
    transformer.h.{i}.ln_1.weight     [n_embd]          (.bias when bias=True)
    transformer.h.{i}.attn.c_attn.weight  [3 * n_embd, n_embd]   q, k, v rows
    transformer.h.{i}.attn.c_proj.weight  [n_embd, n_embd]
    transformer.h.{i}.ln_2.weight     [n_embd]
    transformer.h.{i}.mlp.c_fc.weight     [4 * n_embd, n_embd]
    transformer.h.{i}.mlp.c_proj.weight   [n_embd, 4 * n_embd]
    transformer.ln_f.weight           [n_embd]
    lm_head.weight                    [vocab_size, n_embd]  tied to wte

Two ways to call forward:
  * forward(tokens [B, T])                training / reference: full causal
                                          attention, no cache, T <= block_size.
  * forward(tokens [1, T], input_pos [T]) inference: positions input_pos, the
                                          layer caches are updated in place and
                                          attended over. Prefill passes
                                          input_pos = arange(T); decode passes
                                          one token and its position.
Both return logits [B, T, vocab_size].
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Optional

import torch
from torch import nn
from torch.nn import functional as F

from torchlight.llm.kv_cache import KVCache, cached_attention


@dataclass
class GPTConfig:
    block_size: int = 1024        # positions (wpe rows) = the cache's max_seq_len
    vocab_size: int = 50304
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    dropout: float = 0.0          # training only
    bias: bool = True             # biases in Linear and LayerNorm layers
    gelu_approximate: str = "none"  # "tanh" for Hugging Face GPT-2 ("gelu_new")
    max_batch: int = 1            # cache batch size
    use_custom_op: bool = True    # torchlight::sdpa_with_kv_cache vs plain ops

    def to_dict(self) -> dict:
        return asdict(self)


def _dropout(x: torch.Tensor, p: float, training: bool) -> torch.Tensor:
    """Dropout only while training: an eval-mode export has no dropout nodes."""
    return F.dropout(x, p, True) if training and p > 0.0 else x


class LayerNorm(nn.Module):
    """LayerNorm with an optional bias (nanoGPT's; eps 1e-5 as GPT-2's)."""

    def __init__(self, ndim: int, bias: bool):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        assert config.n_embd % config.n_head == 0, "n_embd must be a multiple of n_head"
        self.n_head = config.n_head
        self.head_dim = config.n_embd // config.n_head
        self.dropout = config.dropout
        self.use_custom_op = config.use_custom_op
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.kv_cache = KVCache(config.max_batch, config.n_head, config.block_size, self.head_dim)

    def forward(self, x: torch.Tensor, input_pos: Optional[torch.Tensor]) -> torch.Tensor:
        b, _, c = x.shape
        q, k, v = self.c_attn(x).split(c, dim=2)
        # [B, T, C] -> [B, H, T, D]; -1 for T keeps symbolic sizes out of
        # the exported graph.
        q = q.view(b, -1, self.n_head, self.head_dim).transpose(1, 2)
        k = k.view(b, -1, self.n_head, self.head_dim).transpose(1, 2)
        v = v.view(b, -1, self.n_head, self.head_dim).transpose(1, 2)
        if input_pos is None:
            y = F.scaled_dot_product_attention(
                q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=True)
        else:
            y = cached_attention(q, k, v, self.kv_cache, input_pos, self.use_custom_op)
        y = y.transpose(1, 2).reshape(b, -1, c)
        return _dropout(self.c_proj(y), self.dropout, self.training)


class MLP(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU(approximate=config.gelu_approximate)
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = config.dropout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _dropout(self.c_proj(self.gelu(self.c_fc(x))), self.dropout, self.training)


class Block(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x: torch.Tensor, input_pos: Optional[torch.Tensor]) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x), input_pos)
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f=LayerNorm(config.n_embd, bias=config.bias),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.lm_head.weight = self.transformer.wte.weight  # tied, as in GPT-2
        # forward returns logits [B, 1, vocab] of the last position only
        # (export_llm(..., last_logits_only=True) sets it).
        self.last_logits_only = False
        self.apply(self._init_weights)
        # GPT-2's scaled init of the residual projections.
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    @property
    def max_seq_len(self) -> int:
        return self.config.block_size

    def num_params(self) -> int:
        """Parameters, counting the tied embedding/classifier once."""
        return sum(p.numel() for p in self.parameters())

    def reset_cache(self) -> None:
        for block in self.transformer.h:
            block.attn.kv_cache.reset()

    def forward(self, tokens: torch.Tensor,
                input_pos: Optional[torch.Tensor] = None) -> torch.Tensor:
        """tokens [B, T] int64, input_pos [T] int64 or None -> logits [B, T, vocab].

        With input_pos (inference only: call it under torch.no_grad(), or the
        caches would keep autograd history), B must be the cache's max_batch
        and input_pos the absolute positions of the T tokens; the caches are
        written at those positions and attended over up to them."""
        t = tokens.shape[1]
        if input_pos is None:
            pos = torch.arange(t, device=tokens.device)
        else:
            pos = input_pos
        x = _dropout(self.transformer.wte(tokens) + self.transformer.wpe(pos), self.config.dropout,
                     self.training)
        for block in self.transformer.h:
            x = block(x, input_pos)
        if self.last_logits_only:  # generation needs the last position's logits only
            x = x[:, -1:, :]
        x = self.transformer.ln_f(x)
        return self.lm_head(x)
