"""Sibling-linear fusion (torchlight.llm.fuse_linears): each Llama block's
wq/wk/wv become one wqkv and w1/w3 one w13, so a program runs 4 linears a
layer instead of 7, and computes what the separate linears did.

Reference: the same model unfused. Each fused output element is the same
row of weights times the same input, and quantization is per output row
(int8 per channel, 8da4w / 4w per group), so the fused program's logits
equal the unfused program's bit for bit (our kernels compute each output
element from its row and the input alone), and the fused eager model's
equal the unfused eager model's within float32 summation order (PyTorch's
GEMM may block a wider matrix differently: atol/rtol 1e-5). Against eager,
the tolerances of the existing parity tests: fp32 1e-5, int8 / 4w 1e-4,
8da4w 1e-3 of the logits' range (test_llm_fused_quantized.py).
"""

from __future__ import annotations

import copy
from collections import Counter

import pytest
import torch
from torch import nn

import torchlight
from llm_helpers import MAX_SEQ, VOCAB, run_program_steps, tiny_gpt, tiny_llama
from torchlight.llm import export_llm
from torchlight.llm.export_llama import build_model, build_parser
from torchlight.llm.fuse_linears import concat_linears, fuse_linears
from torchlight.llm.llama2c import write_llama2c
from torchlight.llm.quantize import quantize_model

QMODES = [None, "int8", "8da4w", "4w"]
LINEAR_OPS = {None: "aten.linear.out", "int8": "torchlight.linear_int8.out",
              "8da4w": "torchlight.linear_8da4w.out", "4w": "torchlight.linear_4w.out"}
STEPS = [(0, 9), (9, 10), (10, 11), (11, MAX_SEQ)]   # a prefill, then decode steps
HEADS = {"gqa": dict(n_heads=4, n_kv_heads=2), "mha": dict(n_heads=4, n_kv_heads=4),
         "mqa": dict(n_heads=4, n_kv_heads=1)}


def _model(heads="gqa", **kw):
    # hidden_dim 64: every linear's width is a multiple of the group (32).
    return tiny_llama(hidden_dim=64, **HEADS[heads], **kw)


def _program(model, qmode, fuse):
    ep = export_llm(model, qmode=qmode, group_size=32, fuse_linears=fuse)
    return torchlight.to_edge(ep).to_executorch(
        torchlight.ExecutorchBackendConfig(check_kernels=False))


def _run(module, tokens):
    return run_program_steps(module, tokens, STEPS)


def _upstream_steps(forward, tokens):
    """Upstream's layout (input_pos = the start position): the logits of
    every step of STEPS, concatenated; `forward(tokens, input_pos)`."""
    with torch.no_grad():
        return torch.cat([torch.as_tensor(forward(tokens[:, a:b], torch.tensor([a])))
                          for a, b in STEPS], dim=1)


def _eager_upstream(model, tokens):
    model.reset_cache()
    return _upstream_steps(model, tokens)


def _eager(model, tokens):
    model.reset_cache()
    with torch.no_grad():
        out = model(tokens, torch.arange(tokens.shape[1]))
    model.reset_cache()
    return out


def _tokens():
    return torch.randint(0, VOCAB, (1, MAX_SEQ), generator=torch.Generator().manual_seed(3))


def _assert_near_eager(got, want, qmode):
    if qmode == "8da4w":
        span = float(want.max() - want.min())
        assert float((got - want).abs().max()) <= 1e-3 * span
    else:
        tol = 1e-5 if qmode is None else 1e-4
        torch.testing.assert_close(got, want, atol=tol, rtol=tol)


# --- the transform -------------------------------------------------------------------------


@pytest.mark.parametrize("heads", sorted(HEADS))
def test_fused_weights_are_the_separate_weights_stacked(heads):
    model = _model(heads)
    before = copy.deepcopy(model)
    assert fuse_linears(model) is model
    for old, new in zip(before.layers, model.layers):
        a, f = old.attention, old.feed_forward
        assert torch.equal(new.attention.wqkv.weight,
                           torch.cat([a.wq.weight, a.wk.weight, a.wv.weight]))
        assert torch.equal(new.feed_forward.w13.weight, torch.cat([f.w1.weight, f.w3.weight]))
        assert not hasattr(new.attention, "wq") and not hasattr(new.feed_forward, "w1")
    hd = model.config.head_dim
    assert model.layers[0].attention.wqkv.out_features == \
        (model.config.n_heads + 2 * model.config.n_kv_heads) * hd
    linears = sum(isinstance(m, nn.Linear) for m in model.modules())
    assert linears == 4 * model.config.n_layers + 1
    # Fusing again changes nothing.
    weights = [p.clone() for p in model.parameters()]
    fuse_linears(model)
    assert all(torch.equal(a, b) for a, b in zip(weights, model.parameters()))


@pytest.mark.parametrize("heads", sorted(HEADS))
@pytest.mark.parametrize("use_custom_op", [True, False], ids=["custom_op", "plain"])
def test_fused_eager_model_equals_the_separate_linears(heads, use_custom_op):
    model = _model(heads, use_custom_op=use_custom_op)
    fused = fuse_linears(copy.deepcopy(model))
    tokens = _tokens()
    torch.testing.assert_close(_eager(fused, tokens), _eager(model, tokens), atol=1e-5, rtol=1e-5)
    with torch.no_grad():  # the uncached forward too
        torch.testing.assert_close(fused(tokens), model(tokens), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("op", ["custom_sdpa", "sdpa_with_kv_cache", "plain"])
def test_fused_upstream_layout_equals_the_separate_linears(op):
    model = _model(upstream_layout=True, upstream_op=op, use_custom_op=op != "plain")
    fused = fuse_linears(copy.deepcopy(model))
    tokens = _tokens()
    torch.testing.assert_close(_eager_upstream(fused, tokens), _eager_upstream(model, tokens),
                               atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("qmode", ["int8", "8da4w", "4w"])
def test_quantized_fused_weight_is_the_separate_quantized_weights_stacked(qmode):
    model = _model()
    separate = copy.deepcopy(model)
    quantize_model(separate, qmode, 32)
    quantize_model(fuse_linears(model), qmode, 32)
    for old, new in zip(separate.layers, model.layers):
        a, f = old.attention, old.feed_forward
        for name in ("weight", "scales"):
            assert torch.equal(getattr(new.attention.wqkv, name),
                               torch.cat([getattr(a.wq, name), getattr(a.wk, name),
                                          getattr(a.wv, name)]))
            assert torch.equal(getattr(new.feed_forward.w13, name),
                               torch.cat([getattr(f.w1, name), getattr(f.w3, name)]))


def test_bad_models_are_named():
    quantized = _model()
    quantize_model(quantized, "int8")
    with pytest.raises(ValueError, match="Int8WeightOnlyLinear.*fuse before quantizing"):
        fuse_linears(quantized)
    with pytest.raises(ValueError, match="GPT has no Llama attention"):
        fuse_linears(tiny_gpt())
    with pytest.raises(ValueError, match="different input widths"):
        concat_linears(nn.Linear(4, 3), nn.Linear(5, 3))
    with pytest.raises(ValueError, match="different input widths, dtypes or bias"):
        concat_linears(nn.Linear(4, 3), nn.Linear(4, 3, bias=False))


def test_biases_are_stacked_too():
    a, b = nn.Linear(6, 3), nn.Linear(6, 5)
    fused = concat_linears(a, b)
    x = torch.randn(2, 6)
    with torch.no_grad():
        assert torch.equal(fused(x), torch.cat([a(x), b(x)], dim=-1))


# --- the program ------------------------------------------------------------------------------


@pytest.mark.parametrize("qmode", QMODES, ids=lambda q: q or "fp32")
def test_program_runs_four_linears_a_layer(qmode):
    counts = {}
    for fuse in (False, True):
        graph = _program(_model(), qmode, fuse).method_graph().graph
        counts[fuse] = Counter(str(n.target) for n in graph.nodes if n.op == "call_function")
    layers = _model().config.n_layers
    linear = LINEAR_OPS[qmode]
    assert counts[False][linear] == 7 * layers + 1
    assert counts[True][linear] == 4 * layers + 1
    # No transposes either way (rope_sdpa_with_kv_cache reads [B, T, H, D]);
    # slices cut q, k, v (3); torchlight::swiglu reads gate and up in place
    # (test_llm_block_ops.py); nothing else is added.
    assert counts[True]["aten.permute_copy.out"] == counts[False]["aten.permute_copy.out"] == 0
    assert counts[True]["aten.slice_copy.Tensor_out"] == \
        counts[False]["aten.slice_copy.Tensor_out"] + 3 * layers
    assert "aten.split_with_sizes_copy.out" not in counts[True]
    added = counts[True] - counts[False]
    assert set(added) <= {"aten.slice_copy.Tensor_out"}, added


@pytest.mark.parametrize("heads", ["gqa", "mha"])
@pytest.mark.parametrize("qmode", QMODES, ids=lambda q: q or "fp32")
def test_fused_program_equals_the_unfused_program_and_eager(runtime, qmode, heads):
    model = _model(heads)
    fused_model = copy.deepcopy(model)
    tokens = _tokens()
    separate = _run(runtime.load(_program(model, qmode, False).buffer), tokens)
    fused = _run(runtime.load(_program(fused_model, qmode, True).buffer), tokens)
    assert torch.equal(fused, separate), float((fused - separate).abs().max())
    # export_llm quantized (and fused) the models in place: eager references.
    _assert_near_eager(fused, _eager(fused_model, tokens), qmode)
    _assert_near_eager(separate, _eager(model, tokens), qmode)


# --- export_llama and checkpoints -----------------------------------------------------------


def _export_llama_model(checkpoint, *flags):
    args = build_parser().parse_args(["-c", str(checkpoint), "-kv", "--use_sdpa_with_kv_cache",
                                      "--max_seq_length", str(MAX_SEQ), *flags])
    return build_model(args)


def test_export_llama_fuses_after_loading_a_checkpoint(tmp_path):
    """A llama2.c checkpoint (separate wq/wk/wv, w1/w3) loads, fuses with
    --fuse-linears (the default keeps upstream's linears), and both models
    give the same logits as the model that wrote it."""
    source = _model(use_custom_op=False)
    write_llama2c(tmp_path / "model.bin", source)
    fused = _export_llama_model(tmp_path / "model.bin", "--fuse-linears")
    separate = _export_llama_model(tmp_path / "model.bin")
    assert fused.layers[0].attention.fused and fused.layers[0].feed_forward.fused
    assert not separate.layers[0].attention.fused and hasattr(separate.layers[0].attention, "wq")
    tokens = _tokens()
    got_separate = _eager_upstream(separate, tokens)
    torch.testing.assert_close(_eager_upstream(fused, tokens), got_separate, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(got_separate, _eager(source, tokens), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("qmode", ["int8", "8da4w"])
def test_export_llama_program_from_a_checkpoint_fused_equals_unfused(runtime, tmp_path, qmode):
    from llm_helpers import export_llama_program
    source = _model(use_custom_op=False)
    write_llama2c(tmp_path / "model.bin", source)
    flags = ["-c", str(tmp_path / "model.bin"), "-kv", "--use_sdpa_with_kv_cache",
             "--max_seq_length", str(MAX_SEQ), "-qmode", qmode, "-G", "32",
             "--generate_full_logits"]
    programs = {name: export_llama_program(flags + extra, tmp_path / f"{name}.pte")
                for name, extra in (("fused", ["--fuse-linears"]), ("separate", []))}
    tokens = _tokens()

    def program_logits(pte):
        module = runtime.load(str(pte))
        return _upstream_steps(lambda t, p: module.run("forward", [t, p])[0], tokens)

    logits = {name: program_logits(pte) for name, pte in programs.items()}
    assert torch.equal(logits["fused"], logits["separate"])


# --- XNNPACK -----------------------------------------------------------------------------------


@pytest.mark.parametrize("qmode", [None, "8da4w"], ids=lambda q: q or "fp32")
def test_fused_model_lowers_to_xnnpack(runtime, qmode):
    """Every fused linear becomes one XNNPACK fully-connected (the slices of
    its result, of a dynamic token count, stay outside the delegate), and
    the logits equal the unfused XNNPACK program's within float rounding."""
    from torchlight.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

    model = _model(use_custom_op=False)
    fused_model = fuse_linears(copy.deepcopy(model))
    tokens = _tokens()
    logits = {}
    for name, m in (("separate", model), ("fused", fused_model)):
        ep = export_llm(m, qmode=qmode, group_size=32)
        prog = torchlight.to_edge_transform_and_lower(
            ep, partitioner=[XnnpackPartitioner()]).to_executorch()
        ops = set(prog.operators())
        assert not {op for op in ops if "linear" in op or "quantized_decomposed" in op}, ops
        logits[name] = _run(runtime.load(prog.buffer), tokens)
    span = float(logits["separate"].max() - logits["separate"].min())
    assert float((logits["fused"] - logits["separate"]).abs().max()) <= 1e-5 * span
