"""Upstream's llama:: operators (torchlight.llm.llama_ops; C++ kernels in
kernels/llm/op_llama_sdpa.cpp): their schemas, eager semantics and the C++
kernels in .pte programs, each checked against PyTorch's own
scaled_dot_product_attention with a causal mask (atol 1e-5, rtol 1e-5).
Layouts are upstream's: [B, S, H, D], caches [B, max_S, Hkv, D], grouped
query attention."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.export import Dim
from torch.nn import functional as F

import torchlight
from llm_helpers import tiny_llama
from torchlight.llm import export_llm, llama_ops

B, HQ, HKV, D, MAX_S = 1, 4, 2, 8, 16
TOL = dict(atol=1e-5, rtol=1e-5)


def _reference(q_all, k_all, v_all):
    """Causal GQA over the whole sequence with torch's SDPA: [B, T, H, D] in and out."""
    rep = q_all.shape[2] // k_all.shape[2]
    q = q_all.transpose(1, 2)
    k = k_all.transpose(1, 2).repeat_interleave(rep, dim=1)
    v = v_all.transpose(1, 2).repeat_interleave(rep, dim=1)
    return F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2)


def _qkv(t, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(B, t, HQ, D, generator=g), torch.randn(B, t, HKV, D, generator=g),
            torch.randn(B, t, HKV, D, generator=g))


def test_schemas_are_upstreams():
    assert str(torch.ops.llama.custom_sdpa.default._schema) == (
        "llama::custom_sdpa(Tensor query, Tensor key, Tensor value, SymInt start_pos, "
        "Tensor? attn_mask=None, float drpout_p=0., bool is_causal=False, float? scale=None) "
        "-> Tensor")
    assert str(torch.ops.llama.update_cache.out._schema) == (
        "llama::update_cache.out(Tensor value, Tensor(a!) cache, SymInt start_pos, *, "
        "Tensor(b!) out) -> Tensor(b!)")
    assert "SymInt start_pos, SymInt seq_len" in str(
        torch.ops.llama.sdpa_with_kv_cache.out._schema)


@pytest.mark.parametrize("fused", [False, True], ids=["update_cache+custom_sdpa",
                                                      "sdpa_with_kv_cache"])
def test_eager_chunks_equal_causal_sdpa(fused):
    q, k, v = _qkv(11)
    kc, vc = torch.zeros(B, MAX_S, HKV, D), torch.zeros(B, MAX_S, HKV, D)
    outs = []
    for a, b in [(0, 6), (6, 7), (7, 11)]:
        if fused:
            outs.append(llama_ops.sdpa_with_kv_cache(q[:, a:b], k[:, a:b], v[:, a:b], kc, vc, a,
                                                     b - a, None, 0.0, True))
        else:
            llama_ops.update_cache(k[:, a:b], kc, a)
            llama_ops.update_cache(v[:, a:b], vc, a)
            outs.append(llama_ops.custom_sdpa(q[:, a:b], kc, vc, a, None, 0.0, True))
    torch.testing.assert_close(torch.cat(outs, 1), _reference(q, k, v), **TOL)
    torch.testing.assert_close(kc[:, :11], k)
    assert not kc[:, 11:].any()


def test_eager_rejects_what_the_kernels_do_not_compute():
    q, k, v = _qkv(2)
    kc = torch.zeros(B, MAX_S, HKV, D)
    with pytest.raises(ValueError, match="attn_mask"):
        llama_ops.custom_sdpa(q, kc, kc, 0, torch.zeros(2, MAX_S), 0.0, True)
    with pytest.raises(ValueError, match="outside the cache"):
        llama_ops.update_cache(k, kc, MAX_S - 1)


class _Attend(nn.Module):
    """One attention step over buffers in upstream's layout: forward(q, k, v, input_pos [1])."""

    def __init__(self, fused: bool, hkv: int = HKV, d: int = D, max_s: int = MAX_S):
        super().__init__()
        self.fused = fused
        self.max_s = max_s
        self.register_buffer("kc", torch.zeros(B, max_s, hkv, d), persistent=False)
        self.register_buffer("vc", torch.zeros(B, max_s, hkv, d), persistent=False)

    def forward(self, q, k, v, input_pos):
        start = input_pos[0].item()
        torch._check_is_size(start)
        torch._check(start < self.max_s)
        if self.fused:
            return llama_ops.sdpa_with_kv_cache(q, k, v, self.kc, self.vc, start, q.shape[1],
                                                None, 0.0, True)
        llama_ops.update_cache(k, self.kc, start)
        llama_ops.update_cache(v, self.vc, start)
        return llama_ops.custom_sdpa(q, self.kc, self.vc, start, None, 0.0, True)


def _program(module, example, dynamic, tmp_path):
    from torchlight.llm.export import _drop_scalar_asserts
    ep = _drop_scalar_asserts(torch.export.export(module, example, dynamic_shapes=dynamic))
    prog = torchlight.to_edge(ep).to_executorch(torchlight.ExecutorchBackendConfig())
    path = tmp_path / "attend.pte"
    prog.save(str(path))
    return path, prog


@pytest.mark.parametrize("fused", [False, True], ids=["update_cache+custom_sdpa",
                                                      "sdpa_with_kv_cache"])
def test_kernels_in_a_program_equal_causal_sdpa(runtime, tmp_path, fused):
    q, k, v = _qkv(12, seed=3)
    seq = Dim("seq", min=1, max=MAX_S)
    dynamic = {"q": {1: seq}, "k": {1: seq}, "v": {1: seq}, "input_pos": None}
    example = (q[:, :3], k[:, :3], v[:, :3], torch.tensor([0]))
    path, prog = _program(_Attend(fused), example, dynamic, tmp_path)
    names = {op.name for plan in prog.program.execution_plan for op in plan.operators}
    expected = {"llama::sdpa_with_kv_cache"} if fused else {"llama::update_cache",
                                                            "llama::custom_sdpa"}
    assert expected <= names, names
    module = runtime.load(str(path))
    outs = []
    for a, b in [(0, 5), (5, 6), (6, 7), (7, 12)]:
        (out,) = module.run("forward", [q[:, a:b], k[:, a:b], v[:, a:b], torch.tensor([a])])
        outs.append(torch.as_tensor(out).clone())
    torch.testing.assert_close(torch.cat(outs, 1), _reference(q, k, v), **TOL)


@pytest.mark.parametrize("fused", [False, True], ids=["update_cache+custom_sdpa",
                                                      "sdpa_with_kv_cache"])
@pytest.mark.parametrize("hq,hkv,d", [(3, 3, 33), (8, 2, 48), (4, 1, 5)],
                         ids=["mha-d33", "gqa4-d48", "mqa-d5"])
def test_prefill_tiles_equal_causal_sdpa(runtime, tmp_path, fused, hq, hkv, d):
    """Chunks of 1, 3, 5, 7 and 129 rows from start positions 0..16: the
    prefill's multi-row tiles (two query rows per score tile, four per value
    tile, with each row's own causal remainder) against torch's causal SDPA,
    across a 128-key tile boundary."""
    g = torch.Generator().manual_seed(7)
    t, max_s = 145, 160
    q, k, v = (torch.randn(B, t, h, d, generator=g) for h in (hq, hkv, hkv))
    seq = Dim("seq", min=1, max=max_s)
    dynamic = {"q": {1: seq}, "k": {1: seq}, "v": {1: seq}, "input_pos": None}
    example = (q[:, :3], k[:, :3], v[:, :3], torch.tensor([0]))
    path, _ = _program(_Attend(fused, hkv, d, max_s), example, dynamic, tmp_path)
    module = runtime.load(str(path))
    outs = []
    for a, b in [(0, 1), (1, 4), (4, 9), (9, 16), (16, 145)]:
        (out,) = module.run("forward", [q[:, a:b], k[:, a:b], v[:, a:b], torch.tensor([a])])
        outs.append(torch.as_tensor(out).clone())
    torch.testing.assert_close(torch.cat(outs, 1), _reference(q, k, v), **TOL)


def test_kernel_rejects_a_start_past_the_cache(runtime, tmp_path):
    q, k, v = _qkv(4)
    seq = Dim("seq", min=1, max=MAX_S)
    dynamic = {"q": {1: seq}, "k": {1: seq}, "v": {1: seq}, "input_pos": None}
    path, _ = _program(_Attend(False), (q[:, :2], k[:, :2], v[:, :2], torch.tensor([0])),
                       dynamic, tmp_path)
    module = runtime.load(str(path))
    with pytest.raises(Exception, match="outside the 16 positions"):
        module.run("forward", [q, k, v, torch.tensor([MAX_S - 2])])


@pytest.mark.parametrize("op", ["custom_sdpa", "sdpa_with_kv_cache", "plain"])
def test_upstream_layout_llama_program_equals_eager(runtime, tmp_path, op):
    """forward(tokens [1, T], input_pos [1]) -> logits [1, vocab] of the last
    position, prefill then decode, against our layout's eager model."""
    reference = tiny_llama(use_custom_op=False)
    model = tiny_llama(use_custom_op=op != "plain", upstream_layout=True, upstream_op=op)
    model.load_state_dict(reference.state_dict())
    ep = export_llm(model, last_logits_only=True)
    prog = torchlight.to_edge(ep).to_executorch(torchlight.ExecutorchBackendConfig())
    path = tmp_path / "llama.pte"
    prog.save(str(path))
    module = runtime.load(str(path))
    tokens = torch.randint(0, reference.config.vocab_size, (1, 14))
    with torch.no_grad():
        expected = reference(tokens)
    for a, b in [(0, 9), (9, 10), (10, 14)]:
        (logits,) = module.run("forward", [tokens[:, a:b], torch.tensor([a])])
        logits = torch.as_tensor(logits)
        assert logits.shape == (1, reference.config.vocab_size)
        torch.testing.assert_close(logits, expected[:, b - 1], **TOL)
