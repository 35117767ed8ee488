"""Float16 KV caches (kv_cache.use_float16_kv_caches): the model stays
float32, the caches are stored float16 and read back widened.

- The program's cache buffers are float16 (half the planned bytes) and the
  fused operator updates them in place.
- The runtime's logits follow eager's with the same float16 caches, with the
  fused operator and with the plain decomposition. Not to 1e-5 as float32
  programs do: a key or value that differs from eager's by one float32 ulp
  (summation order) can round to the neighbouring float16, a 2^-11 step that
  moves later logits by up to ~5e-4 here. So: within 1e-3 of the logits'
  scale, and at most a third of the distance between eager's float16- and
  float32-cache logits (a runtime that kept float32 caches would sit at that
  whole distance).
- Against float32 caches the logits move by float16's rounding of keys and
  values only: not bit-equal (so the caches really are float16), within
  2e-2 of the logits' largest magnitude on these sharp tiny models.
"""

from __future__ import annotations

import pytest
import torch

import torchlight
from llm_helpers import ARCHES, MAX_SEQ, VOCAB
from torchlight.llm import export_llm
from torchlight.llm.kv_cache import use_float16_kv_caches
from torchlight.pte import schema

# The fused attention each model's program calls (Llama's rotates q and k too).
FUSED = {"gpt": "torchlight::sdpa_with_kv_cache.out",
         "llama": "torchlight::rope_sdpa_with_kv_cache.out"}
STEPS = [(0, 9), (9, 10), (10, 11), (11, 12), (12, MAX_SEQ)]


def _half_cache_model(arch: str, use_custom_op: bool = True):
    model = ARCHES[arch](use_custom_op=use_custom_op)
    assert use_float16_kv_caches(model) == 2  # One cache per layer.
    return model


def _lower(model):
    edge = torchlight.to_edge(export_llm(model))
    return edge.to_executorch(torchlight.ExecutorchBackendConfig())


def _cache_tensors(prog):
    plan = prog.program.execution_plan[0]
    return [v.val for v in plan.values
            if isinstance(v.val, schema.Tensor) and v.val.extra_tensor_info is not None
            and v.val.extra_tensor_info.fully_qualified_name.endswith(("k_cache", "v_cache"))]


def _eager_logits(model, tokens):
    """Logits of every position, fed in STEPS through the model's cache (a
    call without input_pos would attend without the cache)."""
    with torch.no_grad():
        return torch.cat([model(tokens[:, a:b], torch.arange(a, b)) for a, b in STEPS], dim=1)


@pytest.mark.parametrize("arch", sorted(ARCHES))
def test_program_holds_float16_caches_updated_in_place(arch):
    prog = _lower(_half_cache_model(arch))
    caches = _cache_tensors(prog)
    assert len(caches) == 4
    assert all(t.scalar_type == schema.ScalarType.HALF for t in caches)
    assert "aten::copy.out" not in prog.operators()
    assert FUSED[arch] in prog.operators()
    float32 = _cache_tensors(_lower(ARCHES[arch](use_custom_op=True)))
    assert all(t.scalar_type == schema.ScalarType.FLOAT for t in float32)


@pytest.mark.parametrize("use_custom_op", [True, False], ids=["fused", "plain"])
@pytest.mark.parametrize("arch", sorted(ARCHES))
def test_runtime_matches_eager_with_the_same_float16_caches(runtime, arch, use_custom_op):
    module = runtime.load(_lower(_half_cache_model(arch, use_custom_op)).buffer)
    tokens = torch.randint(0, VOCAB, (1, MAX_SEQ))
    expected = _eager_logits(_half_cache_model(arch, use_custom_op), tokens)
    float32_caches = _eager_logits(ARCHES[arch](use_custom_op=use_custom_op), tokens)
    actual = torch.cat([torch.as_tensor(module.run("forward", [tokens[:, a:b],
                                                               torch.arange(a, b)])[0])
                        for a, b in STEPS], dim=1)
    error = (actual - expected).abs().max().item()
    shift = (expected - float32_caches).abs().max().item()
    assert error <= 1e-3 * max(1.0, float32_caches.abs().max().item())
    assert error <= shift / 3, (error, shift)


@pytest.mark.parametrize("arch", sorted(ARCHES))
def test_float16_caches_move_logits_by_float16_rounding_only(arch):
    tokens = torch.randint(0, VOCAB, (1, MAX_SEQ))
    half = _eager_logits(_half_cache_model(arch), tokens)
    full = _eager_logits(ARCHES[arch](use_custom_op=True), tokens)
    difference = (half - full).abs().max().item()
    assert 0 < difference <= 2e-2 * full.abs().max().item()


def test_models_without_a_float32_torchlight_cache_are_refused():
    upstream = ARCHES["llama"](use_custom_op=True, upstream_layout=True)
    with pytest.raises(ValueError, match="no torchlight KVCache"):
        use_float16_kv_caches(upstream)
    model = ARCHES["llama"]()
    use_float16_kv_caches(model)
    with pytest.raises(ValueError, match="only a float32 model's caches"):
        use_float16_kv_caches(model)
