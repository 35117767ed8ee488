"""LLM weight quantization (torchlight.llm.quantize): the quantizers' error
bounds, upstream's embedding packing, each mode's eager numerics against a
float reference with bounds derived from the scales, the exported graph's
operators (upstream's quantized_decomposed names), and lowering to a program."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from llm_helpers import MAX_SEQ, VOCAB, tiny_gpt, tiny_llama
import torchlight
from torchlight.kernels.quantized import unpack_embedding_weight
from torchlight.llm import export_llm
from torchlight.llm.quantize import (Int4WeightOnlyLinear, Int8DynActInt4WeightLinear,
                                     Int8WeightOnlyLinear, QuantizedEmbedding,
                                     pack_embedding_weight, parse_embedding_spec,
                                     quantize_model, quantize_symmetric)
from torchlight.pte import pte_file

qd = torch.ops.quantized_decomposed


@pytest.mark.parametrize("bits,group", [(8, 0), (4, 32), (4, 128), (2, 64)])
def test_quantize_symmetric_error_is_half_a_step(bits, group):
    w = torch.randn(16, 256) * 0.1
    values, scales = quantize_symmetric(w, bits, group)
    assert values.dtype == torch.int8
    assert values.min() >= -(1 << (bits - 1)) and values.max() <= (1 << (bits - 1)) - 1
    per_group = scales.reshape(16, -1, 1) if group else scales.reshape(16, 1, 1)
    assert scales.shape == ((16,) if group == 0 else (16, 256 // group))
    g = group or 256
    rebuilt = (values.reshape(16, -1, g).float() * per_group)
    err = (rebuilt - w.reshape(16, -1, g)).abs()
    # Half a step, except where the most negative value clips at qmin (-2^(b-1) is
    # used only for values below -max|w|, which symmetric scaling never produces).
    assert (err <= per_group / 2 + 1e-7).all()


def test_embedding_packing_is_upstreams_layout():
    values = torch.tensor([[-8, 7, 0, 1]], dtype=torch.int8)
    # 4-bit: element 2i in the high nibble, each + 8: (0, 15), (8, 9).
    assert pack_embedding_weight(values, 4).tolist() == [[0x0F, 0x89]]
    values2 = torch.tensor([[-2, 1, 0, -1]], dtype=torch.int8)
    # 2-bit: element j in bits 2j..2j+1, each + 2: 0 | 3<<2 | 2<<4 | 1<<6.
    assert pack_embedding_weight(values2, 2).tolist() == [[0 | (3 << 2) | (2 << 4) | (1 << 6)]]
    for bits in (4, 2):
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1))
        rand = torch.randint(lo, hi, (5, 16), dtype=torch.int8)
        assert torch.equal(unpack_embedding_weight(pack_embedding_weight(rand, bits), bits), rand)


def _linear_bound(x, module, group):
    """max |y - y_float| per output from weight rounding alone:
    sum_k |x_k| * scale(n, k) / 2."""
    k = module.in_features
    scales = module.scales.reshape(module.out_features, -1)
    per_k = scales.repeat_interleave(k // scales.shape[1], dim=1)  # [N, K]
    return (x.abs() @ (per_k / 2).t())


@pytest.mark.parametrize("mode", ["int8", "4w"])
def test_weight_only_linear_error_within_rounding_bound(mode):
    lin = nn.Linear(128, 24)
    x = torch.randn(3, 5, 128)
    q = Int8WeightOnlyLinear(lin) if mode == "int8" else Int4WeightOnlyLinear(lin, 32)
    y, ref = q(x), lin(x)
    bound = _linear_bound(x, q, 32)
    assert ((y - ref).abs() <= bound + 1e-5).all()
    assert (y - ref).abs().max() > 0  # it did quantize


def test_8da4w_linear_matches_its_definition():
    """Per-token asymmetric int8 activations times int4 group weights, as the
    ops' definitions say, computed here in plain float arithmetic."""
    lin = nn.Linear(64, 16, bias=False)
    x = torch.randn(2, 3, 64)
    q = Int8DynActInt4WeightLinear(lin, 32)
    # Activations: scale = (max(x,0) - min(x,0)) / 255 per token, zero point
    # chosen so the range maps onto -128..127.
    lo = x.amin(-1, keepdim=True).clamp(max=0)
    hi = x.amax(-1, keepdim=True).clamp(min=0)
    scale = ((hi - lo) / 255).double()
    zp = torch.clamp(-128 - lo / scale, -128, 127).round()
    xq = torch.clamp(torch.round(x / scale) + zp, -128, 127)
    xdq = ((xq - zp) * scale).float()
    w = (q.weight.float().reshape(16, 2, 32) * q.scales.reshape(16, 2, 1)).reshape(16, 64)
    torch.testing.assert_close(q(x), xdq @ w.t(), rtol=1e-5, atol=1e-5)
    # And against float: x^ w^ - x w = (x^ - x) w^ + x (w^ - w), each bounded
    # by half a step of its quantization.
    act_bound = scale.float() / 2 * w.abs().sum(1)
    assert ((q(x) - lin(x)).abs() <= _linear_bound(x, q, 32) + act_bound + 1e-4).all()


@pytest.mark.parametrize("bits,group", [(8, 0), (8, 16), (4, 16), (2, 32)])
def test_quantized_embedding_error_within_half_step(bits, group):
    emb = nn.Embedding(40, 32)
    idx = torch.randint(0, 40, (2, 7))
    q = QuantizedEmbedding(emb, bits, group)
    assert q.weight.dtype == (torch.int8 if bits == 8 else torch.uint8)
    assert q.weight.shape == (40, 32 * bits // 8)
    scales = q.scales.reshape(40, -1).repeat_interleave(32 // q.scales.reshape(40, -1).shape[1],
                                                        dim=1)
    err = (q(idx) - emb(idx)).abs()
    assert (err <= scales[idx] / 2 + 1e-6).all()


def _graph_ops(model):
    ep = export_llm(model)
    return [str(n.target) for n in ep.graph.nodes if n.op == "call_function"], ep


def test_8da4w_graph_is_torchaos():
    model = tiny_gpt()
    quantize_model(model, "8da4w", 32)
    targets, _ = _graph_ops(model)
    chain = ["quantized_decomposed.choose_qparams_per_token_asymmetric.default",
             "quantized_decomposed.quantize_per_token.default",
             "quantized_decomposed.dequantize_per_token.default",
             "quantized_decomposed.dequantize_per_channel_group.default",
             "aten.linear.default"]
    n_linear = targets.count("aten.linear.default")
    assert n_linear == 2 * 4 + 1  # per layer c_attn, c_proj, c_fc, c_proj; lm_head
    for op in chain:
        assert targets.count(op) == n_linear, op
    # In order, for the first linear.
    first = [t for t in targets if t in chain][:5]
    assert first == chain


def test_skipped_linears_stay_float():
    model = tiny_llama()  # hidden_dim 72: w2's input width is no multiple of 32
    skipped = quantize_model(model, "4w", 32)
    assert skipped == [f"layers.{i}.feed_forward.w2" for i in range(2)]
    assert isinstance(model.layers[0].feed_forward.w2, nn.Linear)
    assert isinstance(model.layers[0].feed_forward.w1, Int4WeightOnlyLinear)


def test_bad_arguments_name_the_problem():
    with pytest.raises(ValueError, match="unknown quantization mode 'int3'"):
        quantize_model(tiny_gpt(), "int3")
    with pytest.raises(ValueError, match="group size 48"):
        quantize_model(tiny_gpt(), "8da4w", 48)
    with pytest.raises(ValueError, match="bits must be 8, 4 or 2"):
        parse_embedding_spec("3,32")
    with pytest.raises(ValueError, match="expected 'bits,group'"):
        parse_embedding_spec("four")
    assert parse_embedding_spec("8") == (8, 0) and parse_embedding_spec("4,32") == (4, 32)


# (mode, embedding, max |logit error| / logit range, min cosine similarity).
# The tiny models' weights are large random ones (llm_helpers), the worst
# case for 4 bits; each module's own error bound is checked exactly above.
MODES = [("8da4w", "4,32", 0.45, 0.85), ("int8", "8,0", 0.05, 0.999),
         ("4w", None, 0.45, 0.85), (None, "8,16", 0.05, 0.999)]


@pytest.mark.parametrize("make", [tiny_gpt, tiny_llama], ids=["gpt", "llama"])
@pytest.mark.parametrize("qmode,embedding,tolerance,min_cosine", MODES,
                         ids=[f"{m}-E{e}" for m, e, _, _ in MODES])
def test_model_quantizes_exports_and_lowers(make, qmode, embedding, tolerance, min_cosine):
    """Logits of the quantized model stay near the float logits; the exported program computes what the quantized model
    does; it lowers to out variants and serializes."""
    float_model = make()
    model = copy.deepcopy(float_model)
    quantize_model(model, qmode, 32, embedding)
    tokens = torch.randint(0, VOCAB, (1, 9))
    with torch.no_grad():
        ref, out = float_model(tokens), model(tokens)
    assert (out - ref).abs().max() <= tolerance * (ref.max() - ref.min())
    assert torch.cosine_similarity(out.flatten(), ref.flatten(), dim=0) >= min_cosine

    ep = export_llm(model)
    pos = torch.arange(9)
    model.reset_cache()
    with torch.no_grad():
        eager = model(tokens, pos)
        model.reset_cache()
        torch.testing.assert_close(ep.module()(tokens, pos), eager, rtol=1e-5, atol=1e-5)

    prog = torchlight.to_edge(ep).to_executorch(
        torchlight.ExecutorchBackendConfig(check_kernels=False))
    names = set(prog.operators())
    # 8da4w linears are fused into torchlight::linear_8da4w (the tiny Llama's
    # w2, width 72, stays float with group 32), int8 ones into linear_int8,
    # 4w ones into linear_4w.
    expected = {"8da4w": {"torchlight::linear_8da4w.out"},
                "int8": {"torchlight::linear_int8.out"},
                "4w": {"torchlight::linear_4w.out"},
                None: set()}[qmode]
    if embedding:
        bits = int(embedding.split(",")[0])
        expected.add({8: "quantized_decomposed::embedding_byte.out",
                      4: "quantized_decomposed::embedding_4bit.out"}[bits])
    assert expected <= names, names
    program = pte_file.read_pte(prog.buffer).program
    assert sorted({op.qualified_name for op in program.execution_plan[0].operators}) == \
        prog.operators()


def test_quantized_program_is_smaller():
    sizes = {}
    for qmode, emb in [(None, None), ("int8", "8,0")]:
        model = tiny_gpt(n_embd=64)
        quantize_model(model, qmode, 32, emb)
        prog = torchlight.to_edge(export_llm(model)).to_executorch(
            torchlight.ExecutorchBackendConfig(check_kernels=False))
        sizes[qmode] = len(prog.buffer)
    assert sizes["int8"] < 0.45 * sizes[None], sizes


def test_export_llm_quantizes_first():
    model = tiny_gpt()
    ep = export_llm(model, qmode="int8", embedding_quantize="8,0")
    targets = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    assert "quantized_decomposed.dequantize_per_channel.default" in targets
    assert "quantized_decomposed.embedding_byte.default" in targets
    assert isinstance(model.lm_head, Int8WeightOnlyLinear)


def test_export_gpt_cli_flags(tmp_path, capsys, monkeypatch):
    """examples/llm/export_gpt.py -qmode/-G/-E: the program has the mode's operators."""
    import importlib.util
    from helpers import REPO
    from torchlight.kernel_check import find_kernel_list
    from torchlight.kernels.quantized import out_variant_names
    spec = importlib.util.spec_from_file_location("export_gpt",
                                                  REPO / "examples/llm/export_gpt.py")
    cli = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cli)

    def operators(path):
        return {op.qualified_name for op in pte_file.read_pte(path.read_bytes()).program
                .execution_plan[0].operators}

    pte = tmp_path / "q4w.pte"
    assert cli.main(["--pte", str(pte), "--tokens", "0", "-qmode", "4w", "-G", "64"]) == 0
    ops = operators(pte)   # 4w linears fused, their weights packed at export
    assert "torchlight::linear_4w.out" in ops
    assert "quantized_decomposed::dequantize_per_channel_group.out" not in ops

    # The export checks operators against the runtime build's kernels; let it
    # accept every quantized out variant, whether or not the build has it yet.
    built = find_kernel_list()
    if built is not None:
        names = tmp_path / "kernels.txt"
        names.write_text(built.read_text() + "\n".join(out_variant_names()) + "\n")
        monkeypatch.setenv("TORCHLIGHT_KERNEL_LIST", str(names))
    pte = tmp_path / "q8da4w.pte"
    assert cli.main(["--pte", str(pte), "--tokens", "0", "-qmode", "8da4w", "-G", "32",
                     "-E", "4,32"]) == 0
    assert {"torchlight::linear_8da4w.out",
            "quantized_decomposed::embedding_4bit.out"} <= operators(pte)
    assert cli.main(["--tokens", "0", "-qmode", "8da4w", "-G", "48"]) == 2
    assert "group size 48" in capsys.readouterr().err


def _lowered(model, **config):
    return torchlight.to_edge(export_llm(model), compile_config=config.pop("compile", None)) \
        .to_executorch(torchlight.ExecutorchBackendConfig(check_kernels=False, **config))


def test_8da4w_fuses_into_linear_8da4w_with_packed_weights():
    model = tiny_gpt()
    quantize_model(model, "8da4w", 32)
    fused = _lowered(copy.deepcopy(model))
    assert "torchlight::linear_8da4w.out" in fused.operators()
    assert not [n for n in fused.operators() if "per_token" in n or "channel_group" in n]
    unfused = _lowered(copy.deepcopy(model), fuse_quantized_linears=False)
    assert "quantized_decomposed::dequantize_per_channel_group.out" in unfused.operators()
    assert "torchlight::linear_8da4w.out" not in unfused.operators()
    # Packed two a byte: the fused program drops the int8 weights' half.
    n_weight_bytes = sum(m.weight.numel() for m in model.modules()
                         if isinstance(m, Int8DynActInt4WeightLinear))
    assert len(unfused.buffer) - len(fused.buffer) >= 0.45 * n_weight_bytes
    # Upstream targets have no such kernel: no fusion.
    upstream = _lowered(copy.deepcopy(model), compile=torchlight.EdgeCompileConfig(
        kernel_target="executorch-quantized"))
    assert "torchlight::linear_8da4w.out" not in upstream.operators()


def test_linear_8da4w_op_matches_the_decomposed_module():
    lin = nn.Linear(64, 24)
    q = Int8DynActInt4WeightLinear(lin, 32)
    x = torch.randn(2, 5, 64)
    packed = pack_embedding_weight(q.weight, 4)
    got = torch.ops.torchlight.linear_8da4w(x, packed, q.scales, 32, q.bias)
    torch.testing.assert_close(got, q(x), rtol=1e-6, atol=1e-6)
