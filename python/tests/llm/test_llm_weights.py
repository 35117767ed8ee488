"""Weight loaders: nanoGPT checkpoints, Hugging Face GPT-2 state dicts and
llama2.c legacy .bin files, each checked against an independent numpy
reading/forward pass rather than only against our own writer."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
import torch

from llm_helpers import VOCAB, tiny_gpt, tiny_llama
from torchlight.llm.gpt_weights import load_gpt_state_dict, load_nanogpt_checkpoint
from torchlight.llm.llama2c import load_llama2c, read_llama2c, write_llama2c

# ---------------------------------------------------------------- nanoGPT


def test_nanogpt_checkpoint_with_compile_prefix(tmp_path):
    model = tiny_gpt(bias=False)
    c = model.config
    ckpt = {"model": {"_orig_mod." + k: v for k, v in model.state_dict().items()},
            "model_args": dict(n_layer=c.n_layer, n_head=c.n_head, n_embd=c.n_embd,
                               block_size=c.block_size, bias=c.bias, vocab_size=c.vocab_size,
                               dropout=0.0),
            "iter_num": 5, "best_val_loss": torch.tensor(1.5), "config": {"dataset": "x"}}
    path = tmp_path / "ckpt.pt"
    torch.save(ckpt, path)
    loaded = load_nanogpt_checkpoint(path, use_custom_op=False)
    assert loaded.config.bias is False and loaded.config.use_custom_op is False
    assert loaded.lm_head.weight is loaded.transformer.wte.weight
    tokens = torch.randint(0, VOCAB, (1, 11))
    with torch.no_grad():
        torch.testing.assert_close(loaded(tokens), model(tokens), atol=0, rtol=0)


def test_nanogpt_checkpoint_missing_entry():
    with pytest.raises(ValueError, match="no 'model_args' entry"):
        load_nanogpt_checkpoint({"model": {}})


# ------------------------------------------------------- Hugging Face GPT-2


def _hf_gpt2_state_dict(rng, n_layer=2, n_embd=16, vocab=VOCAB, n_pos=20, prefix=""):
    """Random weights in Hugging Face GPT2Model layout: Conv1D weights [in, out]."""
    def w(*shape):
        return rng.normal(0, 0.3, shape).astype(np.float32)
    sd = {f"{prefix}wte.weight": w(vocab, n_embd), f"{prefix}wpe.weight": w(n_pos, n_embd),
          f"{prefix}ln_f.weight": 1 + w(n_embd), f"{prefix}ln_f.bias": w(n_embd)}
    for i in range(n_layer):
        h = f"{prefix}h.{i}."
        sd.update({
            h + "ln_1.weight": 1 + w(n_embd), h + "ln_1.bias": w(n_embd),
            h + "attn.c_attn.weight": w(n_embd, 3 * n_embd), h + "attn.c_attn.bias": w(3 * n_embd),
            h + "attn.c_proj.weight": w(n_embd, n_embd), h + "attn.c_proj.bias": w(n_embd),
            h + "ln_2.weight": 1 + w(n_embd), h + "ln_2.bias": w(n_embd),
            h + "mlp.c_fc.weight": w(n_embd, 4 * n_embd), h + "mlp.c_fc.bias": w(4 * n_embd),
            h + "mlp.c_proj.weight": w(4 * n_embd, n_embd), h + "mlp.c_proj.bias": w(n_embd),
            # Mask buffers HF keeps in its state dicts.
            h + "attn.bias": np.tril(np.ones((n_pos, n_pos), np.float32))[None, None],
            h + "attn.masked_bias": np.array(-1e4, np.float32),
        })
    return sd


def _numpy_gpt2(sd, ids, n_head, prefix=""):
    """GPT-2 as Hugging Face computes it: Conv1D y = x @ W + b, tanh GELU."""
    def ln(x, name):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + 1e-5) * sd[name + ".weight"] + sd[name + ".bias"]

    def conv1d(x, name):
        return x @ sd[name + ".weight"] + sd[name + ".bias"]

    t = len(ids)
    x = sd[prefix + "wte.weight"][ids] + sd[prefix + "wpe.weight"][:t]
    c = x.shape[1]
    d = c // n_head
    i = 0
    while f"{prefix}h.{i}.ln_1.weight" in sd:
        h = f"{prefix}h.{i}."
        q, k, v = np.split(conv1d(ln(x, h + "ln_1"), h + "attn.c_attn"), 3, axis=1)
        heads = []
        for head in range(n_head):
            sl = slice(head * d, (head + 1) * d)
            s = q[:, sl] @ k[:, sl].T / math.sqrt(d)
            s = np.where(np.tril(np.ones((t, t), bool)), s, -np.inf)
            p = np.exp(s - s.max(-1, keepdims=True))
            heads.append((p / p.sum(-1, keepdims=True)) @ v[:, sl])
        x = x + conv1d(np.concatenate(heads, 1), h + "attn.c_proj")
        m = conv1d(ln(x, h + "ln_2"), h + "mlp.c_fc")
        m = 0.5 * m * (1 + np.tanh(math.sqrt(2 / math.pi) * (m + 0.044715 * m ** 3)))
        x = x + conv1d(m, h + "mlp.c_proj")
        i += 1
    return ln(x, prefix + "ln_f") @ sd[prefix + "wte.weight"].T


@pytest.mark.parametrize("prefix", ["", "transformer."], ids=["GPT2Model", "GPT2LMHeadModel"])
def test_hf_gpt2_state_dict_matches_numpy_gpt2(prefix):
    rng = np.random.default_rng(3)
    sd = _hf_gpt2_state_dict(rng, prefix=prefix)
    torch_sd = {k: torch.from_numpy(v) for k, v in sd.items()}
    if prefix:
        torch_sd["lm_head.weight"] = torch_sd["transformer.wte.weight"]
    model = load_gpt_state_dict(torch_sd, n_head=4)
    assert model.config.gelu_approximate == "tanh"
    assert (model.config.n_layer, model.config.n_embd, model.config.block_size) == (2, 16, 20)
    ids = rng.integers(0, VOCAB, 12)
    expected = _numpy_gpt2(sd, ids, n_head=4, prefix=prefix)
    with torch.no_grad():
        full = model(torch.from_numpy(ids)[None])[0]
        model.reset_cache()
        cached = torch.cat([model(torch.from_numpy(ids[:8])[None], torch.arange(8)),
                            model(torch.from_numpy(ids[8:])[None], torch.arange(8, 12))], 1)[0]
    np.testing.assert_allclose(full.numpy(), expected, atol=1e-4, rtol=1e-4)
    np.testing.assert_allclose(cached.numpy(), expected, atol=1e-4, rtol=1e-4)


def test_hf_state_dict_with_fewer_positions_and_shape_errors():
    sd = {k: torch.from_numpy(v) for k, v in _hf_gpt2_state_dict(np.random.default_rng(0)).items()}
    assert load_gpt_state_dict(sd, n_head=4, block_size=8).transformer.wpe.weight.shape == (8, 16)
    sd["h.0.attn.c_attn.weight"] = torch.zeros(16, 40)
    with pytest.raises(ValueError, match=r"c_attn.weight has shape \[16, 40\]"):
        load_gpt_state_dict(sd, n_head=4)


# ---------------------------------------------------------------- llama2.c


def _numpy_read(path):
    """The legacy format read the plain way: header, then arrays in order."""
    raw = open(path, "rb").read()
    dim, hidden, n_layers, n_heads, n_kv, vocab, seq_len = struct.unpack("<7i", raw[:28])
    floats = np.frombuffer(raw, dtype="<f4", offset=28)
    shared, vocab = vocab > 0, abs(vocab)
    hs = dim // n_heads
    kv_dim = n_kv * hs
    sizes = [("tok", vocab * dim), ("rms_att", n_layers * dim), ("wq", n_layers * dim * dim),
             ("wk", n_layers * dim * kv_dim), ("wv", n_layers * dim * kv_dim),
             ("wo", n_layers * dim * dim), ("rms_ffn", n_layers * dim),
             ("w1", n_layers * dim * hidden), ("w2", n_layers * hidden * dim),
             ("w3", n_layers * dim * hidden), ("rms_final", dim),
             ("freq_real", seq_len * hs // 2), ("freq_imag", seq_len * hs // 2)]
    w, off = {}, 0
    for name, n in sizes:
        w[name] = floats[off:off + n]
        off += n
    w["wcls"] = w["tok"] if shared else floats[off:off + vocab * dim]
    off += 0 if shared else vocab * dim
    assert off == len(floats)
    header = dict(dim=dim, hidden=hidden, n_layers=n_layers, n_heads=n_heads, n_kv=n_kv,
                  vocab=vocab, seq_len=seq_len, shared=shared)
    return header, w


def _numpy_llama2c_forward(header, w, tokens):
    """llama2.c run.c's forward, one token at a time, in numpy: returns the
    logits after each token."""
    dim, hidden, L = header["dim"], header["hidden"], header["n_layers"]
    nh, nkv = header["n_heads"], header["n_kv"]
    hs = dim // nh
    kv_dim, kv_mul = nkv * hs, nh // nkv
    mat = {k: w[k].reshape(L, -1) for k in ("wq", "wk", "wv", "wo", "w1", "w2", "w3")}
    key_cache = np.zeros((L, len(tokens), kv_dim), np.float32)
    value_cache = np.zeros_like(key_cache)

    def rmsnorm(x, weight):
        return weight * (x / np.sqrt(np.mean(x * x) + 1e-5))

    out = []
    for pos, token in enumerate(tokens):
        x = w["tok"].reshape(-1, dim)[token].copy()
        for l in range(L):
            xb = rmsnorm(x, w["rms_att"].reshape(L, dim)[l])
            q = mat["wq"][l].reshape(dim, dim) @ xb
            k = mat["wk"][l].reshape(kv_dim, dim) @ xb
            v = mat["wv"][l].reshape(kv_dim, dim) @ xb
            for i in range(0, dim, 2):
                freq = 1.0 / 10000.0 ** ((i % hs) / hs)
                fcr, fci = math.cos(pos * freq), math.sin(pos * freq)
                for vec in ((q, k) if i < kv_dim else (q,)):
                    v0, v1 = vec[i], vec[i + 1]
                    vec[i], vec[i + 1] = v0 * fcr - v1 * fci, v0 * fci + v1 * fcr
            key_cache[l, pos], value_cache[l, pos] = k, v
            xb = np.zeros(dim, np.float32)
            for h in range(nh):
                g = (h // kv_mul) * hs
                att = key_cache[l, :pos + 1, g:g + hs] @ q[h * hs:(h + 1) * hs] / math.sqrt(hs)
                att = np.exp(att - att.max())
                att /= att.sum()
                xb[h * hs:(h + 1) * hs] = att @ value_cache[l, :pos + 1, g:g + hs]
            x = x + mat["wo"][l].reshape(dim, dim) @ xb
            xb = rmsnorm(x, w["rms_ffn"].reshape(L, dim)[l])
            h1 = mat["w1"][l].reshape(hidden, dim) @ xb
            h3 = mat["w3"][l].reshape(hidden, dim) @ xb
            x = x + mat["w2"][l].reshape(dim, hidden) @ (h1 / (1 + np.exp(-h1)) * h3)
        x = rmsnorm(x, w["rms_final"])
        out.append(w["wcls"].reshape(-1, dim) @ x)
    return np.stack(out)


@pytest.mark.parametrize("shared", [True, False], ids=["shared", "unshared"])
def test_llama2c_round_trip_and_numpy_parity(tmp_path, shared):
    model = tiny_llama(shared_classifier=shared)
    if not shared:
        assert model.output.weight is not model.tok_embeddings.weight
    path = tmp_path / "model.bin"
    write_llama2c(path, model)

    header, w = _numpy_read(path)
    c = model.config
    assert header == dict(dim=c.dim, hidden=c.hidden_dim, n_layers=c.n_layers, n_heads=c.n_heads,
                          n_kv=c.n_kv_heads, vocab=c.vocab_size, seq_len=c.max_seq_len,
                          shared=shared)
    assert struct.unpack("<i", path.read_bytes()[20:24])[0] == (c.vocab_size if shared
                                                                else -c.vocab_size)
    np.testing.assert_array_equal(w["wk"].reshape(c.n_layers, -1, c.dim)[1],
                                  model.layers[1].attention.wk.weight.detach().numpy())
    np.testing.assert_array_equal(w["wcls"].reshape(c.vocab_size, c.dim),
                                  model.output.weight.detach().numpy())

    loaded = load_llama2c(path)
    assert loaded.config.shared_classifier == shared
    assert (loaded.output.weight is loaded.tok_embeddings.weight) == shared
    for name, value in model.state_dict().items():
        torch.testing.assert_close(loaded.state_dict()[name], value, atol=0, rtol=0)

    tokens = [5, 17, 3, 42, 8, 0, 33]
    expected = _numpy_llama2c_forward(header, w, tokens)
    with torch.no_grad():
        full = loaded(torch.tensor([tokens]))[0].numpy()
        loaded.reset_cache()
        steps = [loaded(torch.tensor([[t]]), torch.tensor([p]))[0, 0].numpy()
                 for p, t in enumerate(tokens)]
    np.testing.assert_allclose(full, expected, atol=1e-4, rtol=1e-4)
    np.testing.assert_allclose(np.stack(steps), expected, atol=1e-4, rtol=1e-4)


def test_llama2c_rope_tables_are_llama2c_frequencies(tmp_path):
    path = tmp_path / "model.bin"
    write_llama2c(path, tiny_llama())
    config, arrays = read_llama2c(path)
    hs = config.head_dim
    pos, i = 5, 3
    angle = pos / 10000.0 ** (2 * i / hs)
    assert arrays["freq_cis_real"].shape == (config.max_seq_len, hs // 2)
    assert arrays["freq_cis_real"][pos, i] == pytest.approx(math.cos(angle), abs=1e-6)
    assert arrays["freq_cis_imag"][pos, i] == pytest.approx(math.sin(angle), abs=1e-6)


def test_llama2c_bad_files(tmp_path):
    path = tmp_path / "model.bin"
    write_llama2c(path, tiny_llama())
    data = path.read_bytes()
    cases = {
        "truncated.bin": (data[:-4], "bytes, the header"),
        "short.bin": (data[:10], "shorter than the 28-byte header"),
        "magic.bin": (struct.pack("<i", 0x616B3432) + data[4:], "magic 'ak42'"),
        "heads.bin": (data[:12] + struct.pack("<i", 5) + data[16:], "not n_heads 5 times"),
        "kv.bin": (data[:16] + struct.pack("<i", 3) + data[20:], "not a multiple of n_kv_heads 3"),
        "zero.bin": (data[:8] + struct.pack("<i", 0) + data[12:], "n_layers is 0"),
    }
    for name, (content, message) in cases.items():
        bad = tmp_path / name
        bad.write_bytes(content)
        with pytest.raises(ValueError, match=message):
            read_llama2c(bad)


def test_load_llama2c_with_a_shorter_cache(tmp_path):
    path = tmp_path / "model.bin"
    model = tiny_llama()
    write_llama2c(path, model)
    short = load_llama2c(path, max_seq_len=8, use_custom_op=False)
    assert short.layers[0].attention.kv_cache.k_cache.shape[2] == 8
    tokens = torch.randint(0, VOCAB, (1, 8))
    with torch.no_grad():
        torch.testing.assert_close(short(tokens), model(tokens), atol=1e-5, rtol=1e-5)
