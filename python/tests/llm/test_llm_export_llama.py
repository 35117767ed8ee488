"""python3 -m torchlight.llm.export_llama (upstream's flags) and the programs
it writes in `torchlight llm`: greedy token ids from the C++ runner equal
PyTorch's generate() on the same (quantized) eager model; the metadata
methods carry upstream's names and values; every layout the runner reads
(start position, every position, no KV cache) gives the same tokens.

The CLI is build/release/bin/torchlight (the test runner builds it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import torchlight
from torchlight.backends.xnnpack.runtime_scales import as_xnnpack_computes
from llm_helpers import export_llama_program, write_llama_params
from torchlight.llm import generate
from torchlight.llm.export_llama import build_model, build_parser

REPO = Path(__file__).resolve().parents[3]
CLI = REPO / "build" / "release" / "bin" / "torchlight"
PROMPT = [1, 15, 30, 7]
NEW = 12


@pytest.fixture(scope="module")
def params(tmp_path_factory):
    return write_llama_params(tmp_path_factory.mktemp("params"))


def _reference(flags) -> list:
    model = build_model(build_parser().parse_args(flags))
    if "-X" in flags:  # XNNPACK computes 8da4w with bf16 block scales
        model = as_xnnpack_computes(model)
    return generate(model, PROMPT, NEW)


def _llm(pte: Path, tmp_path: Path, *extra) -> dict:
    stats = tmp_path / "stats.json"
    ids = ",".join(map(str, PROMPT))
    r = subprocess.run([str(CLI), "llm", "--model", str(pte), "--prompt-tokens", ids,
                        "--temperature", "0", "--max-new-tokens", str(NEW), "--ignore-eos",
                        "--stats-json", str(stats), *extra], capture_output=True, timeout=300)
    assert r.returncode == 0, r.stderr.decode()
    result = json.loads(stats.read_text())
    result["stdout"] = r.stdout.decode()
    return result


@pytest.mark.parametrize("layout", [
    ["-kv", "--use_sdpa_with_kv_cache"],
    ["-kv", "--use_sdpa_with_kv_cache", "--use_fused_sdpa_with_kv_cache"],
    ["-kv"],
    [],
    ["-kv", "--use_sdpa_with_kv_cache", "--attention_ops", "torchlight"],
    ["-kv", "--use_sdpa_with_kv_cache", "--attention_ops", "torchlight", "--kv_cache_dtype",
     "fp16"],
], ids=["custom_sdpa", "fused", "plain_kv", "no_kv", "torchlight_ops", "torchlight_fp16_cache"])
def test_every_layout_generates_pytorchs_greedy_tokens(params, tmp_path, layout):
    flags = ["-p", str(params), "--max_seq_length", "32", *layout]
    pte = export_llama_program(flags, tmp_path / "m.pte")
    expected = _reference(flags)
    result = _llm(pte, tmp_path)
    assert result["prompt_token_ids"] == PROMPT
    assert result["token_ids"] == expected
    # With ids in, stdout is ids: the prompt's, then the generated ones.
    assert result["stdout"].split() == [str(i) for i in PROMPT + expected]


def test_quantized_xnnpack_program_generates_the_quantized_models_tokens(params, tmp_path):
    """The issue's done-when command, on a small shape: -kv
    --use_sdpa_with_kv_cache -X -qmode 8da4w -G 32 -E 4,32. The linears run
    on XNNPACK, so PyTorch runs the model with XNNPACK's bf16 block scales."""
    flags = ["-p", str(params), "--max_seq_length", "32", "-kv", "--use_sdpa_with_kv_cache",
             "-X", "-qmode", "8da4w", "-G", "32", "-E", "4,32"]
    pte = export_llama_program(flags, tmp_path / "q.pte")
    assert _llm(pte, tmp_path)["token_ids"] == _reference(flags)


def test_metadata_methods_have_upstreams_names_and_values(params, tmp_path, runtime):
    flags = ["-p", str(params), "--max_seq_length", "16", "--max_context_length", "32", "-kv",
             "--use_sdpa_with_kv_cache", "--metadata", '{"get_bos_id": 5, "get_eos_ids": [6, 7]}']
    pte = export_llama_program(flags, tmp_path / "m.pte")
    module = runtime.load(str(pte))
    values = {name: list(module.run(name, [])) for name in (
        "get_bos_id", "get_eos_ids", "get_max_seq_len", "get_max_context_len", "get_n_layers",
        "get_vocab_size", "use_kv_cache", "use_sdpa_with_kv_cache", "enable_dynamic_shape")}
    assert values == {"get_bos_id": [5], "get_eos_ids": [6, 7], "get_max_seq_len": [16],
                      "get_max_context_len": [32], "get_n_layers": [2], "get_vocab_size": [320],
                      "use_kv_cache": [True], "use_sdpa_with_kv_cache": [True],
                      "enable_dynamic_shape": [True]}
    # The runner's context is get_max_context_len(): 4 prompt + 28 new tokens fit.
    stats = tmp_path / "s.json"
    r = subprocess.run([str(CLI), "llm", "--model", str(pte), "--prompt-tokens", "1,2,3,4",
                        "--temperature", "0", "--ignore-eos", "--stats-json", str(stats)],
                       capture_output=True, timeout=300)
    assert r.returncode == 0, r.stderr.decode()
    result = json.loads(stats.read_text())
    assert result["max_seq_len"] == 32 and len(result["token_ids"]) == 29


def test_bad_flags_are_one_error_line(params, tmp_path):
    for flags, needle in [(["-p", str(params), "-d", "fp16", "-E", "8,0"], "quantize an fp32"),
                          (["-p", str(params), "--use_sdpa_with_kv_cache"], "needs -kv"),
                          (["-c", str(tmp_path / "missing.pth")], "does not exist")]:
        r = subprocess.run([sys.executable, "-m", "torchlight.llm.export_llama", *flags,
                            "--output_name", str(tmp_path / "x.pte")], capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 1 and r.stderr.startswith("error: ") and needle in r.stderr, \
            r.stderr


def test_prompt_tokens_errors(params, tmp_path):
    pte = export_llama_program(["-p", str(params), "--max_seq_length", "32", "-kv"], tmp_path / "m.pte")
    for ids, needle in [("1,x", "'x' is not a token id"), ("1,,2", "'' is not a token id"),
                        ("1,400", "outside the model's vocabulary of 320")]:
        r = subprocess.run([str(CLI), "llm", "--model", str(pte), "--prompt-tokens", ids],
                           capture_output=True, timeout=60)
        err = r.stderr.decode()
        assert r.returncode == 1 and err.startswith("error: ") and needle in err, err


def test_inspect_lists_the_metadata_methods_with_their_values(params, tmp_path):
    pte = export_llama_program(["-p", str(params), "--max_seq_length", "32", "-kv",
                   "--metadata", '{"get_bos_id": 1, "get_eos_ids": [2, 3]}',
                   "--tokenizer_path", str(tmp_path / "tokenizer.model")], tmp_path / "m.pte")
    r = subprocess.run([str(CLI), "inspect", str(pte)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    section = r.stdout.split("\nmetadata\n", 1)[1]
    rows = {line.split()[0]: line.split(None, 1)[1] for line in section.splitlines() if line}
    assert rows == {"get_bos_id": "1", "get_eos_ids": "[2, 3]", "get_max_seq_len": "32",
                    "get_max_context_len": "32", "get_n_layers": "2", "get_vocab_size": "320",
                    "use_kv_cache": "true", "use_sdpa_with_kv_cache": "false",
                    "enable_dynamic_shape": "true", "get_tokenizer": '"tokenizer.model"'}
    assert "\nmethod forward\n" in r.stdout  # forward is described, not run
