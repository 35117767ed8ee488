"""Checkpoint loaders (torchlight.llm.checkpoints): a small random model is
written in each format by code here (Meta's consolidated.pth + params.json,
Hugging Face safetensors + config.json with HF's rotary permutation,
llama2.c .bin, nanoGPT ckpt.pt), loaded back, and its logits compared with
the original's in eager (atol 1e-5). The Hugging Face case is also checked
against a forward pass written here in Hugging Face's own convention
(rotate_half rotary on the permuted weights), so the un-permutation is
tested against the format's meaning, not only against its inverse."""

from __future__ import annotations

import json
import math

import pytest
import torch
from torch.nn import functional as F

from llm_helpers import tiny_gpt
from torchlight.llm import Llama, LlamaConfig
from torchlight.llm.checkpoints import (config_from_meta_params, load_checkpoint, load_hf_llama,
                                        load_meta_llama, meta_hidden_dim)
from torchlight.llm.llama import rope_frequencies
from torchlight.llm.llama2c import write_llama2c

TOL = dict(atol=1e-5, rtol=1e-5)
PARAMS = {"dim": 64, "n_layers": 2, "n_heads": 4, "n_kv_heads": 2, "vocab_size": 97,
          "multiple_of": 32, "ffn_dim_multiplier": 1.3, "norm_eps": 1e-5, "rope_theta": 500000.0}


def _random_llama(params=PARAMS, shared=False, seed=0, **kw) -> Llama:
    torch.manual_seed(seed)
    config = config_from_meta_params(params, max_seq_len=32, use_custom_op=False, **kw)
    config.shared_classifier = shared
    model = Llama(config).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.rand_like(p) + 0.5 if p.dim() == 1 else torch.randn_like(p) * 0.2)
    return model


def _tokens(vocab, n=20):
    return torch.randint(0, vocab, (1, n), generator=torch.Generator().manual_seed(1))


def test_meta_hidden_dim_is_metas_formula():
    assert meta_hidden_dim(768, 32, None) == 2048          # stories110M
    assert meta_hidden_dim(4096, 256, None) == 11008       # Llama 2 7B
    assert meta_hidden_dim(4096, 1024, 1.3) == 14336       # Llama 3 8B
    assert meta_hidden_dim(2048, 256, 1.5) == 8192         # Llama 3.2 1B


def test_meta_round_trip(tmp_path):
    model = _random_llama()
    torch.save(model.state_dict(), tmp_path / "consolidated.pth")
    (tmp_path / "params.json").write_text(json.dumps(PARAMS))
    loaded = load_meta_llama(tmp_path / "consolidated.pth", tmp_path / "params.json",
                             max_seq_len=32, use_custom_op=False)
    assert loaded.config.n_kv_heads == 2 and loaded.config.rope_theta == 500000.0
    tokens = _tokens(97)
    with torch.no_grad():
        torch.testing.assert_close(loaded(tokens), model(tokens), **TOL)
    same = load_checkpoint(tmp_path / "consolidated.pth", tmp_path / "params.json",
                           max_seq_len=32, use_custom_op=False)
    with torch.no_grad():
        torch.testing.assert_close(same(tokens), model(tokens), **TOL)


def test_meta_llama2_style_params_take_vocab_from_the_weights(tmp_path):
    params = dict(PARAMS, vocab_size=-1)
    model = _random_llama()
    sd = dict(model.state_dict())
    sd["rope.freqs"] = torch.zeros(8)  # Llama 2 checkpoints carry their rotary table.
    torch.save(sd, tmp_path / "c.pth")
    (tmp_path / "params.json").write_text(json.dumps(params))
    loaded = load_meta_llama(tmp_path / "c.pth", tmp_path / "params.json", max_seq_len=32)
    assert loaded.config.vocab_size == 97


def test_meta_shape_mismatch_is_named(tmp_path):
    torch.save(_random_llama().state_dict(), tmp_path / "c.pth")
    (tmp_path / "params.json").write_text(json.dumps(dict(PARAMS, dim=96)))
    with pytest.raises(ValueError, match="tok_embeddings.weight has shape"):
        load_meta_llama(tmp_path / "c.pth", tmp_path / "params.json")


def test_llama31_rope_scaling_is_metas():
    """use_scaled_rope: Meta's per-frequency rule, written here as a loop."""
    head_dim, theta = 64, 500000.0
    cos, _ = rope_frequencies(head_dim, 4, theta, scaled=True, scale_factor=8.0)
    freqs = [1.0 / theta ** (i / head_dim) for i in range(0, head_dim, 2)]
    low_wl, high_wl = 8192 / 1.0, 8192 / 4.0
    scaled = []
    for f in freqs:
        wl = 2 * math.pi / f
        if wl < high_wl:
            scaled.append(f)
        elif wl > low_wl:
            scaled.append(f / 8.0)
        else:
            s = (8192 / wl - 1.0) / (4.0 - 1.0)
            scaled.append((1 - s) * f / 8.0 + s * f)
    expected = torch.cos(3 * torch.tensor(scaled, dtype=torch.float64)).float()
    torch.testing.assert_close(cos[3], expected, atol=1e-6, rtol=1e-5)
    assert not torch.allclose(cos[3], rope_frequencies(head_dim, 4, theta)[0][3])


def _hf_permute(w, n_heads):
    """Meta -> Hugging Face row order of a q/k projection (HF's conversion script's rule)."""
    rows, cols = w.shape
    return w.view(n_heads, rows // n_heads // 2, 2, cols).transpose(1, 2).reshape(rows, cols)


def _write_hf(model: Llama, directory, rope_scaling=None):
    from safetensors.torch import save_file
    c = model.config
    sd = {"model.embed_tokens.weight": model.tok_embeddings.weight,
          "model.norm.weight": model.norm.weight}
    if not c.shared_classifier:
        sd["lm_head.weight"] = model.output.weight
    for i, layer in enumerate(model.layers):
        p = f"model.layers.{i}."
        a, f = layer.attention, layer.feed_forward
        sd[p + "self_attn.q_proj.weight"] = _hf_permute(a.wq.weight, c.n_heads)
        sd[p + "self_attn.k_proj.weight"] = _hf_permute(a.wk.weight, c.n_kv_heads)
        sd[p + "self_attn.v_proj.weight"] = a.wv.weight
        sd[p + "self_attn.o_proj.weight"] = a.wo.weight
        sd[p + "mlp.gate_proj.weight"] = f.w1.weight
        sd[p + "mlp.down_proj.weight"] = f.w2.weight
        sd[p + "mlp.up_proj.weight"] = f.w3.weight
        sd[p + "input_layernorm.weight"] = layer.attention_norm.weight
        sd[p + "post_attention_layernorm.weight"] = layer.ffn_norm.weight
    directory.mkdir(exist_ok=True)
    save_file({k: v.detach().contiguous().clone() for k, v in sd.items()},
              str(directory / "model.safetensors"))
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": c.dim,
           "intermediate_size": c.hidden_dim, "num_hidden_layers": c.n_layers,
           "num_attention_heads": c.n_heads, "num_key_value_heads": c.n_kv_heads,
           "vocab_size": c.vocab_size, "rms_norm_eps": c.norm_eps, "rope_theta": c.rope_theta,
           "tie_word_embeddings": c.shared_classifier, "max_position_embeddings": 64,
           "rope_scaling": rope_scaling}
    (directory / "config.json").write_text(json.dumps(cfg))
    return sd, cfg


def _hf_forward(sd, cfg, tokens):
    """A Llama forward in Hugging Face's convention: rotate_half rotary."""
    d, nh, nkv = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd, eps, t = d // nh, cfg["rms_norm_eps"], tokens.shape[1]
    inv = 1.0 / cfg["rope_theta"] ** (torch.arange(0, hd, 2).float() / hd)
    ang = torch.outer(torch.arange(t).float(), inv)
    emb = torch.cat([ang, ang], dim=-1)
    cos, sin = emb.cos(), emb.sin()

    def rot(x):  # [B, H, T, hd]
        x1, x2 = x[..., : hd // 2], x[..., hd // 2:]
        return x * cos + torch.cat([-x2, x1], dim=-1) * sin

    def norm(x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w

    h = sd["model.embed_tokens.weight"][tokens]
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        x = norm(h, sd[p + "input_layernorm.weight"])
        q = (x @ sd[p + "self_attn.q_proj.weight"].T).view(1, t, nh, hd).transpose(1, 2)
        k = (x @ sd[p + "self_attn.k_proj.weight"].T).view(1, t, nkv, hd).transpose(1, 2)
        v = (x @ sd[p + "self_attn.v_proj.weight"].T).view(1, t, nkv, hd).transpose(1, 2)
        q, k = rot(q), rot(k)
        k, v = k.repeat_interleave(nh // nkv, 1), v.repeat_interleave(nh // nkv, 1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(1, t, d)
        h = h + y @ sd[p + "self_attn.o_proj.weight"].T
        x = norm(h, sd[p + "post_attention_layernorm.weight"])
        gate = F.silu(x @ sd[p + "mlp.gate_proj.weight"].T) * (x @ sd[p + "mlp.up_proj.weight"].T)
        h = h + gate @ sd[p + "mlp.down_proj.weight"].T
    head = sd.get("lm_head.weight", sd["model.embed_tokens.weight"])
    return norm(h, sd["model.norm.weight"]) @ head.T


@pytest.mark.parametrize("shared", [False, True], ids=["lm_head", "tied"])
def test_hugging_face_round_trip_and_hf_convention(tmp_path, shared):
    model = _random_llama(shared=shared, seed=2)
    sd, cfg = _write_hf(model, tmp_path / "hf")
    loaded = load_hf_llama(tmp_path / "hf", max_seq_len=32, use_custom_op=False)
    assert loaded.config.shared_classifier == shared
    tokens = _tokens(97)
    with torch.no_grad():
        expected = model(tokens)
        torch.testing.assert_close(loaded(tokens), expected, **TOL)
        torch.testing.assert_close(_hf_forward({k: v.detach() for k, v in sd.items()}, cfg,
                                               tokens), expected, **TOL)
    via_dispatch = load_checkpoint(tmp_path / "hf" / "model.safetensors", max_seq_len=32)
    with torch.no_grad():
        torch.testing.assert_close(via_dispatch(tokens), expected, **TOL)


def test_hugging_face_llama31_rope_scaling(tmp_path):
    model = _random_llama(seed=3, use_scaled_rope=True)
    scaling = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
               "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}
    _write_hf(model, tmp_path / "hf", scaling)
    loaded = load_hf_llama(tmp_path / "hf", max_seq_len=32)
    assert loaded.config.use_scaled_rope
    tokens = _tokens(97)
    with torch.no_grad():
        torch.testing.assert_close(loaded(tokens), model(tokens), **TOL)
    _write_hf(model, tmp_path / "odd", dict(scaling, low_freq_factor=2.0))
    with pytest.raises(ValueError, match="rope_scaling"):
        load_hf_llama(tmp_path / "odd")


def test_llama2c_and_nanogpt_through_load_checkpoint(tmp_path):
    # llama2.c files carry no rope_theta or ffn multiplier: its defaults.
    llama = _random_llama(params=dict(PARAMS, rope_theta=10000.0), shared=True, seed=4)
    write_llama2c(tmp_path / "model.bin", llama)
    loaded = load_checkpoint(tmp_path / "model.bin", max_seq_len=32)
    tokens = _tokens(97)
    with torch.no_grad():
        torch.testing.assert_close(loaded(tokens), llama(tokens), **TOL)

    gpt = tiny_gpt(use_custom_op=False, seed=5)
    c = gpt.config
    torch.save({"model": gpt.state_dict(),
                "model_args": {"n_layer": c.n_layer, "n_head": c.n_head, "n_embd": c.n_embd,
                               "block_size": c.block_size, "vocab_size": c.vocab_size,
                               "bias": True, "dropout": 0.0}}, tmp_path / "ckpt.pt")
    loaded_gpt = load_checkpoint(tmp_path / "ckpt.pt")
    tokens = _tokens(c.vocab_size, 10)
    with torch.no_grad():
        torch.testing.assert_close(loaded_gpt(tokens), gpt(tokens), **TOL)


def test_bad_checkpoints(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_checkpoint(tmp_path / "nope.pth")
    torch.save({"w": torch.zeros(1)}, tmp_path / "c.pth")
    with pytest.raises(ValueError, match="params.json"):
        load_checkpoint(tmp_path / "c.pth")
    (tmp_path / "hf").mkdir()
    (tmp_path / "hf" / "config.json").write_text(json.dumps({"model_type": "mistral"}))
    with pytest.raises(ValueError, match="not a Llama"):
        load_hf_llama(tmp_path / "hf")
