"""Llama (llama2.c layout): RMSNorm, rotary embeddings, SwiGLU, grouped-query
attention, with a static KV cache.

Parameter names are llama2.c's model.py names:

    tok_embeddings.weight                [vocab_size, dim]
    layers.{i}.attention_norm.weight     [dim]
    layers.{i}.attention.wq.weight       [n_heads * head_dim, dim]
    layers.{i}.attention.wk.weight       [n_kv_heads * head_dim, dim]
    layers.{i}.attention.wv.weight       [n_kv_heads * head_dim, dim]
    layers.{i}.attention.wo.weight       [dim, n_heads * head_dim]
    layers.{i}.ffn_norm.weight           [dim]
    layers.{i}.feed_forward.w1.weight    [hidden_dim, dim]   gate
    layers.{i}.feed_forward.w2.weight    [dim, hidden_dim]   down
    layers.{i}.feed_forward.w3.weight    [hidden_dim, dim]   up
    norm.weight                          [dim]
    output.weight                        [vocab_size, dim]   (shared with
                                         tok_embeddings when shared_classifier)

fuse_linears.py turns wq/wk/wv into attention.wqkv and w1/w3 into
feed_forward.w13 (weights concatenated on the output dim, in that order).

Rotary embeddings rotate interleaved pairs (x[2i], x[2i+1]) of each head, as
llama2.c and Meta's reference do. With the cache and the custom operator, a
float32 model's attention keeps q, k, v in the [B, T, H, D] layout its linears
produce and calls torchlight::rope_sdpa_with_kv_cache (rotary embedding,
cache update and attention in one call; custom_ops.py), so the exported
program holds no transposes around attention; rope_in_attention=False keeps
the earlier path (transposes to [B, H, T, D], rope, sdpa_with_kv_cache).
With the cache and the custom operators, each residual add and the RMSNorm
after it are one torchlight::add_rms_norm call, and SwiGLU's silu(w1 x) * w3 x
one torchlight::swiglu call (block_ops.py; fuse_block_ops=False keeps the
separate operators): a block's last residual add is then made with the next
block's attention_norm, so Llama.forward runs the blocks'
forward_deferred_residual. forward() has the same two modes as GPT's:
forward(tokens) without a cache, forward(tokens [1, T], input_pos [T]) with it.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Optional, Tuple

import torch
from torch import nn
from torch.nn import functional as F

from torchlight.llm import block_ops
from torchlight.llm.kv_cache import KVCache, cached_attention, rope_cached_attention
from torchlight.llm.upstream_attention import (UpstreamKVCache, apply_rope_bthd,
                                               upstream_cached_attention, upstream_start_pos)


@dataclass
class LlamaConfig:
    dim: int = 288
    hidden_dim: int = 768
    n_layers: int = 6
    n_heads: int = 6
    n_kv_heads: int = 6
    vocab_size: int = 32000
    max_seq_len: int = 256
    norm_eps: float = 1e-5
    rope_theta: float = 10000.0
    shared_classifier: bool = True  # output.weight is tok_embeddings.weight
    max_batch: int = 1
    use_custom_op: bool = True
    # Upstream ExecuTorch's program layout: forward(tokens [1, T], input_pos [1])
    # with input_pos the start position, caches [B, max_seq_len, Hkv, D], and
    # the llama:: operators (upstream_attention.py) when use_custom_op.
    upstream_layout: bool = False
    # With upstream_layout and use_custom_op: "custom_sdpa" (llama::update_cache
    # then llama::custom_sdpa, upstream's current export) or
    # "sdpa_with_kv_cache" (the fused llama::sdpa_with_kv_cache).
    upstream_op: str = "custom_sdpa"
    # Our layout with use_custom_op: rotary embedding, cache update and
    # attention in one torchlight::rope_sdpa_with_kv_cache call on the
    # [B, T, H, D] q, k, v the linears produce (float32 models), so the
    # program holds no transposes (permute_copy) around attention. False: the
    # earlier program (q, k, v transposed to [B, H, T, D], rope, then
    # torchlight::sdpa_with_kv_cache), kept for comparison.
    rope_in_attention: bool = True
    # Our layout with use_custom_op, float32 activations and a cache: each
    # residual add with the RMSNorm after it as one torchlight::add_rms_norm,
    # and silu(w1 x) * w3 x as one torchlight::swiglu (block_ops.py), so a
    # block runs 3 small operators fewer. False: the earlier program.
    fuse_block_ops: bool = True
    # Llama 3.1 RoPE scaling (use_scaled_rope in Meta's params.json).
    use_scaled_rope: bool = False
    rope_scale_factor: float = 8.0

    @property
    def head_dim(self) -> int:
        return self.dim // self.n_heads

    def to_dict(self) -> dict:
        return asdict(self)


def scale_rope_frequencies(inv: torch.Tensor, scale_factor: float = 8.0,
                           low_freq_factor: float = 1.0, high_freq_factor: float = 4.0,
                           old_context_len: int = 8192) -> torch.Tensor:
    """Llama 3.1's RoPE scaling: wavelengths longer than old_context_len /
    low_freq_factor are divided by scale_factor, shorter than old_context_len /
    high_freq_factor kept, and the band between interpolated smoothly."""
    wavelen = 2 * math.pi / inv
    low_wavelen = old_context_len / low_freq_factor
    high_wavelen = old_context_len / high_freq_factor
    smooth = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    blended = (1 - smooth) * inv / scale_factor + smooth * inv
    out = torch.where(wavelen > low_wavelen, inv / scale_factor, inv)
    band = (wavelen >= high_wavelen) & (wavelen <= low_wavelen)
    return torch.where(band, blended, out)


def rope_frequencies(head_dim: int, max_seq_len: int, theta: float = 10000.0,
                     scaled: bool = False,
                     scale_factor: float = 8.0) -> Tuple[torch.Tensor, torch.Tensor]:
    """cos, sin [max_seq_len, head_dim // 2]: angle p * theta^(-2i / head_dim)
    (Llama 3.1-scaled when `scaled`)."""
    inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2)[: head_dim // 2].float() / head_dim))
    if scaled:
        inv = scale_rope_frequencies(inv, scale_factor)
    angles = torch.outer(torch.arange(max_seq_len).float(), inv)
    return torch.cos(angles), torch.sin(angles)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x [B, H, T, D] with cos, sin [T, D/2]: rotates each pair (x[2i], x[2i+1])."""
    b, h, _, d = x.shape
    pairs = x.reshape(b, h, -1, d // 2, 2)
    real, imag = pairs[..., 0], pairs[..., 1]
    out_real = real * cos - imag * sin
    out_imag = real * sin + imag * cos
    return torch.stack((out_real, out_imag), dim=-1).reshape(b, h, -1, d)


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Attention(nn.Module):
    def __init__(self, config: LlamaConfig):
        super().__init__()
        assert config.dim % config.n_heads == 0, "dim must be a multiple of n_heads"
        assert config.n_heads % config.n_kv_heads == 0, "n_heads must be a multiple of n_kv_heads"
        self.n_heads = config.n_heads
        self.n_kv_heads = config.n_kv_heads
        self.head_dim = config.head_dim
        self.use_custom_op = config.use_custom_op
        self.rope_in_attention = config.rope_in_attention
        self.wq = nn.Linear(config.dim, config.n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(config.dim, config.n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(config.dim, config.n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(config.n_heads * self.head_dim, config.dim, bias=False)
        self.fused = False  # wq, wk, wv replaced by one wqkv (fuse_linears.py)
        self.upstream_layout = config.upstream_layout
        if config.upstream_layout:
            self.kv_cache = UpstreamKVCache(config.max_batch, config.max_seq_len,
                                            config.n_kv_heads, self.head_dim)
            self.upstream_op = config.upstream_op if config.use_custom_op else "plain"
        else:
            self.kv_cache = KVCache(config.max_batch, config.n_kv_heads, config.max_seq_len,
                                    self.head_dim)

    def _project(self, x: torch.Tensor, transpose: bool):
        """q [B, T, Hq, D], k, v [B, T, Hkv, D] of x [B, T, dim], each
        transposed to [B, H, T, D] when `transpose`; -1 for T keeps symbolic
        sizes out of the exported graph."""
        b, h, hkv, d = x.shape[0], self.n_heads, self.n_kv_heads, self.head_dim
        if not self.fused:
            q, k, v = (self.wq(x).view(b, -1, h, d), self.wk(x).view(b, -1, hkv, d),
                       self.wv(x).view(b, -1, hkv, d))
            if transpose:
                return q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
            return q, k, v
        # One [B, T, Hq + 2 Hkv, D] result; transposing it whole is one
        # permute_copy in the program where there were three. Cut by slices,
        # not split: our slice_copy costs ~0.2 us a call at T = 1 against
        # ~1.5 us for one split_with_sizes_copy (stories15m decode profile).
        qkv = self.wqkv(x).view(b, -1, h + 2 * hkv, d)
        if transpose:
            qkv = qkv.transpose(1, 2)
        dim = 1 if transpose else 2  # the heads' dimension
        return qkv.narrow(dim, 0, h), qkv.narrow(dim, h, hkv), qkv.narrow(dim, h + hkv, hkv)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                input_pos: Optional[torch.Tensor], start_pos=None) -> torch.Tensor:
        b = x.shape[0]
        if start_pos is not None:  # upstream layout: [B, T, H, D] throughout
            q, k, v = self._project(x, transpose=False)
            q = apply_rope_bthd(q, cos, sin)
            k = apply_rope_bthd(k, cos, sin)
            y = upstream_cached_attention(q, k, v, self.kv_cache, start_pos, self.upstream_op)
            return self.wo(y.reshape(b, -1, self.n_heads * self.head_dim))
        if input_pos is not None and self.use_custom_op and self.rope_in_attention and \
                x.dtype == torch.float32:  # [B, T, H, D] throughout, rope in the call
            q, k, v = self._project(x, transpose=False)
            y = rope_cached_attention(q, k, v, cos, sin, self.kv_cache, input_pos)
            return self.wo(y.reshape(b, -1, self.n_heads * self.head_dim))
        q, k, v = self._project(x, transpose=True)
        q = apply_rope(q, cos, sin)
        k = apply_rope(k, cos, sin)
        if input_pos is None:
            n_rep = self.n_heads // self.n_kv_heads
            k = k.repeat_interleave(n_rep, dim=1)
            v = v.repeat_interleave(n_rep, dim=1)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            y = cached_attention(q, k, v, self.kv_cache, input_pos, self.use_custom_op)
        return self.wo(y.transpose(1, 2).reshape(b, -1, self.n_heads * self.head_dim))


class FeedForward(nn.Module):
    """SwiGLU: w2(silu(w1 x) * w3 x)."""

    def __init__(self, dim: int, hidden_dim: int):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden_dim, bias=False)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden_dim, bias=False)
        self.hidden_dim = hidden_dim
        self.fused = False  # w1, w3 replaced by one w13 (fuse_linears.py)

    def forward(self, x: torch.Tensor, swiglu_op: bool = False) -> torch.Tensor:
        """`swiglu_op`: the product as one torchlight::swiglu call, which
        reads a fused w13's halves in place (no slices in the program)."""
        if self.fused:
            gate_up = self.w13(x)
            if swiglu_op:
                return self.w2(block_ops.swiglu(gate_up))
            gate = gate_up[..., :self.hidden_dim]
            up = gate_up[..., self.hidden_dim:]
            return self.w2(F.silu(gate) * up)
        if swiglu_op:
            return self.w2(block_ops.swiglu(self.w1(x), self.w3(x)))
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class TransformerBlock(nn.Module):
    def __init__(self, config: LlamaConfig):
        super().__init__()
        self.attention_norm = RMSNorm(config.dim, config.norm_eps)
        self.attention = Attention(config)
        self.ffn_norm = RMSNorm(config.dim, config.norm_eps)
        self.feed_forward = FeedForward(config.dim, config.hidden_dim)

    def forward(self, x, cos, sin, input_pos, start_pos=None):
        x = x + self.attention(self.attention_norm(x), cos, sin, input_pos, start_pos)
        return x + self.feed_forward(self.ffn_norm(x))

    def forward_deferred_residual(self, x, x_normed, cos, sin, input_pos):
        """forward() on block_ops' fused operators, given x and
        attention_norm(x); returns (x + attention, the feed-forward's
        output), whose sum is forward()'s result: the caller adds them
        together with the next RMSNorm (add_rms_norm)."""
        attended = self.attention(x_normed, cos, sin, input_pos)
        x, normed = block_ops.add_rms_norm(x, attended, self.ffn_norm.weight, self.ffn_norm.eps)
        return x, self.feed_forward(normed, swiglu_op=True)


class Llama(nn.Module):
    def __init__(self, config: LlamaConfig):
        super().__init__()
        self.config = config
        self.tok_embeddings = nn.Embedding(config.vocab_size, config.dim)
        self.layers = nn.ModuleList([TransformerBlock(config) for _ in range(config.n_layers)])
        self.norm = RMSNorm(config.dim, config.norm_eps)
        self.output = nn.Linear(config.dim, config.vocab_size, bias=False)
        if config.shared_classifier:
            self.output.weight = self.tok_embeddings.weight
        cos, sin = rope_frequencies(config.head_dim, config.max_seq_len, config.rope_theta,
                                    config.use_scaled_rope, config.rope_scale_factor)
        self.register_buffer("freqs_cos", cos, persistent=False)  # [max_seq_len, head_dim/2]
        self.register_buffer("freqs_sin", sin, persistent=False)
        # forward returns logits [B, 1, vocab] of the last position only
        # (export_llm(..., last_logits_only=True) sets it).
        self.last_logits_only = False
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, mean=0.0, std=0.02)
        for name, p in self.named_parameters():
            if name.endswith("w3.weight") or name.endswith("wo.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layers))

    @property
    def max_seq_len(self) -> int:
        return self.config.max_seq_len

    def reset_cache(self) -> None:
        for layer in self.layers:
            layer.attention.kv_cache.reset()

    def forward(self, tokens: torch.Tensor,
                input_pos: Optional[torch.Tensor] = None) -> torch.Tensor:
        """tokens [B, T] int64, input_pos [T] int64 or None -> logits [B, T, vocab].

        With input_pos (inference only: call it under torch.no_grad(), or the
        caches would keep autograd history), B must be the cache's max_batch
        and input_pos the absolute positions of the T tokens; the caches are
        written at those positions and attended over up to them."""
        t = tokens.shape[1]
        start_pos = None
        if input_pos is None:
            cos, sin = self.freqs_cos[:t], self.freqs_sin[:t]
        elif self.config.upstream_layout:
            start_pos = upstream_start_pos(input_pos, self.config.max_seq_len)
            cos = self.freqs_cos.narrow(0, start_pos, t)
            sin = self.freqs_sin.narrow(0, start_pos, t)
        else:
            cos, sin = self.freqs_cos[input_pos], self.freqs_sin[input_pos]
        h = self.tok_embeddings(tokens)
        if self._fuses_block_ops(h, input_pos):
            h = self._blocks_deferred_residual(h, cos, sin, input_pos)
        else:
            for layer in self.layers:
                h = layer(h, cos, sin, input_pos, start_pos)
        if self.last_logits_only:  # generation needs the last position's logits only
            if self.config.upstream_layout:  # upstream's runner reads [B, vocab]
                return self.output(self.norm(h[:, -1, :]))
            h = h[:, -1:, :]
        return self.output(self.norm(h))

    def _fuses_block_ops(self, h: torch.Tensor, input_pos: Optional[torch.Tensor]) -> bool:
        c = self.config
        return input_pos is not None and c.fuse_block_ops and c.use_custom_op and \
            not c.upstream_layout and h.dtype == torch.float32 and len(self.layers) > 0

    def _blocks_deferred_residual(self, h, cos, sin, input_pos) -> torch.Tensor:
        """The blocks' forward with each residual add fused into the RMSNorm
        after it (block_ops.add_rms_norm) but the last, which the caller's
        slice to the last position follows."""
        normed = self.layers[0].attention_norm(h)
        for i, layer in enumerate(self.layers):
            h, out = layer.forward_deferred_residual(h, normed, cos, sin, input_pos)
            if i + 1 < len(self.layers):
                norm = self.layers[i + 1].attention_norm
                h, normed = block_ops.add_rms_norm(h, out, norm.weight, norm.eps)
        return h + out
