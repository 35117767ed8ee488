"""GPT and Llama with the static KV cache: shapes, cache parity, generation.

Parity tolerance: cached logits match the full-sequence forward within
atol 1e-5, rtol 1e-5 (float32; the two paths sum in different orders).
"""

from __future__ import annotations

import pytest
import torch

from llm_helpers import ARCHES, MAX_SEQ, VOCAB, tiny_gpt, tiny_llama
from torchlight.llm import generate

TOL = dict(atol=1e-5, rtol=1e-5)


def _cached(model, tokens, splits):
    """Logits of `tokens` fed through the cache in chunks of the given sizes."""
    model.reset_cache()
    out, pos = [], 0
    for n in splits:
        out.append(model(tokens[:, pos:pos + n], torch.arange(pos, pos + n)))
        pos += n
    return torch.cat(out, dim=1)


@pytest.mark.parametrize("arch", sorted(ARCHES))
@pytest.mark.parametrize("use_custom_op", [True, False], ids=["custom_op", "plain"])
def test_prefill_then_decode_equals_full_forward(arch, use_custom_op):
    model = ARCHES[arch](use_custom_op=use_custom_op)
    tokens = torch.randint(0, VOCAB, (1, 13))
    with torch.no_grad():
        full = model(tokens)
        assert full.shape == (1, 13, VOCAB)
        cached = _cached(model, tokens, [7] + [1] * 6)   # prefill 7, decode 6
    torch.testing.assert_close(cached, full, **TOL)


@pytest.mark.parametrize("arch", sorted(ARCHES))
def test_chunked_prefill_and_full_cache(arch):
    model = ARCHES[arch]()
    tokens = torch.randint(0, VOCAB, (1, MAX_SEQ))
    with torch.no_grad():
        full = model(tokens)
        torch.testing.assert_close(_cached(model, tokens, [5, 9, 1, 9]), full, **TOL)
        torch.testing.assert_close(_cached(model, tokens, [MAX_SEQ]), full, **TOL)


@pytest.mark.parametrize("arch", sorted(ARCHES))
def test_custom_op_and_plain_paths_agree(arch):
    a, b = ARCHES[arch](use_custom_op=True), ARCHES[arch](use_custom_op=False)
    tokens = torch.randint(0, VOCAB, (1, 10))
    with torch.no_grad():
        torch.testing.assert_close(_cached(a, tokens, [6, 1, 3]), _cached(b, tokens, [6, 1, 3]),
                                   atol=0, rtol=0)
        for name, buf in a.named_buffers():
            torch.testing.assert_close(buf, dict(b.named_buffers())[name], atol=0, rtol=0)


@pytest.mark.parametrize("arch", sorted(ARCHES))
def test_cache_holds_written_rows_only(arch):
    model = ARCHES[arch]()
    with torch.no_grad():
        _cached(model, torch.randint(0, VOCAB, (1, 5)), [3, 2])
    caches = [b for n, b in model.named_buffers() if n.endswith(("k_cache", "v_cache"))]
    assert len(caches) == 2 * 2  # two layers, keys and values
    for cache in caches:
        assert cache[:, :, :5].abs().sum() > 0
        assert torch.count_nonzero(cache[:, :, 5:]) == 0
    model.reset_cache()
    assert all(torch.count_nonzero(c) == 0 for c in caches)


def test_cache_shapes():
    gpt, llama = tiny_gpt(), tiny_llama()
    assert gpt.transformer.h[0].attn.kv_cache.k_cache.shape == (1, 4, MAX_SEQ, 8)
    assert llama.layers[0].attention.kv_cache.v_cache.shape == (1, 2, MAX_SEQ, 8)
    # Caches are state, not weights: checkpoints never carry them.
    assert not any("cache" in k for k in gpt.state_dict())
    assert not any("cache" in k or "freqs" in k for k in llama.state_dict())


@pytest.mark.parametrize("n_kv_heads", [1, 2, 4])
def test_llama_grouped_query_attention_matches_repeated_heads(n_kv_heads):
    """GQA through the cache equals attention with key/value heads repeated."""
    model = tiny_llama(n_kv_heads=n_kv_heads, use_custom_op=True)
    tokens = torch.randint(0, VOCAB, (1, 9))
    with torch.no_grad():
        torch.testing.assert_close(_cached(model, tokens, [4, 1, 1, 3]), model(tokens), **TOL)


def test_llama_rope_rotates_interleaved_pairs():
    from torchlight.llm.llama import apply_rope, rope_frequencies
    cos, sin = rope_frequencies(4, 8)
    x = torch.tensor([1.0, 0.0, 0.0, 1.0]).reshape(1, 1, 1, 4)
    pos = 3
    out = apply_rope(x, cos[pos:pos + 1], sin[pos:pos + 1]).flatten()
    angle0, angle1 = pos * 1.0, pos * 10000.0 ** (-2 / 4)
    expected = torch.tensor([torch.cos(torch.tensor(angle0)), torch.sin(torch.tensor(angle0)),
                             -torch.sin(torch.tensor(angle1)), torch.cos(torch.tensor(angle1))])
    torch.testing.assert_close(out, expected)


def _naive_greedy(model, prompt, n):
    """Greedy decoding without the cache: the full forward every step."""
    ids = list(prompt)
    with torch.no_grad():
        for _ in range(n):
            ids.append(int(model(torch.tensor([ids]))[0, -1].argmax()))
    return ids[len(prompt):]


@pytest.mark.parametrize("arch", sorted(ARCHES))
def test_greedy_generate_matches_uncached_greedy(arch):
    model = ARCHES[arch]()
    prompt = [3, 14, 15, 9, 26]
    out = generate(model, prompt, max_new_tokens=12)
    assert len(out) == 12
    assert out == _naive_greedy(model, prompt, 12)


def test_generate_stops_at_stop_token_and_full_cache():
    model = tiny_gpt()
    prompt = [1, 2, 3]
    free = generate(model, prompt, max_new_tokens=8)
    stop = free[3]
    stopped = generate(model, prompt, max_new_tokens=8, stop_token=stop)
    assert stopped == free[:free.index(stop) + 1]
    # The cache holds MAX_SEQ positions: prompt + new tokens cannot exceed it.
    assert len(generate(model, prompt, max_new_tokens=100)) == MAX_SEQ - len(prompt) + 1
    with pytest.raises(ValueError, match="does not fit"):
        generate(model, [0] * (MAX_SEQ + 1), 1)
    with pytest.raises(ValueError, match="empty"):
        generate(model, [], 1)


def test_sampling_is_deterministic_for_a_seeded_generator():
    model = tiny_llama()
    runs = [generate(model, [5, 6], 10, temperature=0.9, top_k=5,
                     generator=torch.Generator().manual_seed(7)) for _ in range(2)]
    assert runs[0] == runs[1]
    assert all(0 <= t < VOCAB for t in runs[0])
