"""torch.export of the cached models: one method, dynamic sequence length
1..max_seq_len, caches as mutated buffers, the custom op kept or decomposed."""

from __future__ import annotations

import pytest
import torch
from torch.export.graph_signature import OutputKind

from llm_helpers import MAX_SEQ, VOCAB, tiny_gpt, tiny_llama
from torchlight.llm import export_llm
from torchlight.passes.decompose import to_core_aten

CASES = {
    "gpt-custom_op": lambda: tiny_gpt(use_custom_op=True),
    "gpt-plain": lambda: tiny_gpt(use_custom_op=False),
    "llama-custom_op": lambda: tiny_llama(use_custom_op=True),
    "llama-plain": lambda: tiny_llama(use_custom_op=False),
}
# The fused attention each model calls (a float32 Llama's rotates q, k too).
CUSTOM_OPS = {"gpt": torch.ops.torchlight.sdpa_with_kv_cache.default,
              "llama": torch.ops.torchlight.rope_sdpa_with_kv_cache.default}


@pytest.fixture(scope="module", params=sorted(CASES))
def exported(request):
    """(case name, eager model, exported program, its core ATen form)."""
    model = CASES[request.param]()
    ep = export_llm(model)
    return request.param, model, ep, to_core_aten(ep)


def _cache_names(model):
    return sorted(n for n, _ in model.named_buffers() if n.endswith(("k_cache", "v_cache")))


def test_caches_are_mutated_buffers(exported):
    _, model, _, core = exported
    sig = core.graph_signature
    mutated = sorted(sig.buffers_to_mutate.values())
    assert mutated == _cache_names(model)
    kinds = [spec.kind for spec in sig.output_specs]
    assert kinds.count(OutputKind.BUFFER_MUTATION) == len(mutated)
    assert kinds.count(OutputKind.USER_OUTPUT) == 1
    assert list(sig.user_inputs) == ["tokens", "input_pos"]


def test_sequence_length_is_dynamic_up_to_the_cache(exported):
    _, _, ep, _ = exported
    ((tokens_val,), (pos_val,)) = [
        [n.meta["val"] for n in ep.graph.nodes if n.op == "placeholder" and n.name == name]
        for name in ("tokens", "input_pos")]
    seq = tokens_val.shape[1]
    assert isinstance(seq, torch.SymInt) and pos_val.shape[0] == seq
    constraint = ep.range_constraints[seq.node.expr]
    assert (constraint.lower, constraint.upper) == (1, MAX_SEQ)


def test_exported_prefill_and_decode_match_eager(exported):
    """Prefill of 9 tokens, 3 decode steps, then a prefill that fills the cache,
    through the exported program's module (its own buffers) vs eager."""
    _, model, ep, core = exported
    tokens = torch.randint(0, VOCAB, (1, MAX_SEQ))
    with torch.no_grad():
        expected = model(tokens)
    for program in (ep, core):
        module = program.module()
        steps = [(0, 9), (9, 10), (10, 11), (11, 12)]
        with torch.no_grad():
            out = [module(tokens[:, a:b], torch.arange(a, b)) for a, b in steps]
            full = module(tokens, torch.arange(MAX_SEQ))
        torch.testing.assert_close(torch.cat(out, dim=1), expected[:, :12], atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(full, expected, atol=1e-5, rtol=1e-5)


def _targets(ep):
    return {n.target for n in ep.graph.nodes if n.op == "call_function"}


def test_custom_op_kept_or_decomposed(exported):
    name, _, ep, core = exported
    custom_op = CUSTOM_OPS[name.split("-")[0]]
    if name.endswith("custom_op"):
        # Export functionalizes the mutating op: auto_functionalized(op, ...)
        # returns (out, new key_cache, new value_cache), one call per layer.
        calls = [n for n in core.graph.nodes if n.op == "call_function"
                 and n.target is torch.ops.higher_order.auto_functionalized]
        assert len(calls) == 2 and all(n.args[0] is custom_op for n in calls)
        assert custom_op in _targets(ep)
    else:
        assert custom_op not in _targets(ep)
        assert torch.ops.higher_order.auto_functionalized not in _targets(core)
        # The plain decomposition: only core ATen ops, views and size queries.
        for target in _targets(core):
            if isinstance(target, torch._ops.OpOverload):
                assert (torch.Tag.core in target.tags or target.is_view or
                        target is torch.ops.aten.sym_size.int), target
