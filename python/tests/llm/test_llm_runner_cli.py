"""`torchlight llm` (tools/cli/llm_command.cpp over extension/llm/runner) on
exported tiny models: greedy token ids equal torchlight.llm.generate's token
for token, the metadata methods are read, chat keeps the conversation in the
cache, and every failure is one `error:` line with exit status 1.

The CLI is build/release/bin/torchlight (the test runner builds it)."""

from __future__ import annotations

import json
import struct
import subprocess
from pathlib import Path

import pytest
import torch

import torchlight
from llm_helpers import MAX_SEQ, VOCAB, tiny_gpt, tiny_llama
from torchlight.llm import export_llm, generate
from torchlight.llm.metadata import llm_metadata_methods

REPO = Path(__file__).resolve().parents[3]
CLI = REPO / "build" / "release" / "bin" / "torchlight"
FIXTURES = REPO / "tests" / "fixtures" / "upstream"


@pytest.fixture(scope="module")
def cli():
    if not CLI.exists():
        pytest.fail(f"{CLI} is not built (cmake --build build/release --target torchlight_cli)")
    return CLI


def _export(model, path: Path, metadata: dict | None = None) -> Path:
    edge = torchlight.to_edge(export_llm(model), constant_methods=metadata)
    edge.to_executorch(torchlight.ExecutorchBackendConfig()).save(str(path))
    return path


def _llm(cli, *args, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(cli), "llm", *map(str, args)], input=stdin, capture_output=True,
                          text=False, timeout=300)


def _stats(path: Path) -> dict:
    return json.loads(path.read_text())


def _expect_error(result: subprocess.CompletedProcess, *needles: str) -> str:
    err = result.stderr.decode("utf-8", "replace")
    assert result.returncode == 1, err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    for needle in needles:
        assert needle in err, err
    return err


def _llama2c_tokenizer(path: Path, vocab: int) -> Path:
    """A llama2.c tokenizer.bin with `vocab` pieces: <unk>, BOS, EOS, space,
    the letters, then merged pieces scored below the letters."""
    pieces = [b"<unk>", b"\n<s>\n", b"\n</s>\n", b" "] + [bytes([c]) for c in range(97, 123)]
    merges = [b"th", b"he", b"in", b"er", b"an", b" t", b" a", b"the", b" the", b"at", b"ca",
              b" c", b"cat", b" cat", b"on", b"re", b"nd", b"es", b"st", b"en", b"ed", b"to",
              b"it", b"ou", b"ea", b"hi", b"is", b"or", b"ti", b"as", b"te"]
    pieces += merges[:vocab - len(pieces)]
    assert len(pieces) == vocab
    out = struct.pack("<i", max(len(p) for p in pieces))
    for i, piece in enumerate(pieces):
        out += struct.pack("<fi", -float(i), len(piece)) + piece
    path.write_bytes(out)
    return path


def test_gpt_bytes_greedy_matches_generate(cli, tmp_path):
    model = tiny_gpt(use_custom_op=False, vocab_size=256)
    pte = _export(model, tmp_path / "gpt.pte", llm_metadata_methods(model, tokenizer="bytes"))
    stats_file = tmp_path / "stats.json"
    # No --tokenizer: the program's get_tokenizer() hint says "bytes".
    r = _llm(cli, "--model", pte, "--prompt", "Hello", "--temperature", "0",
             "--max-new-tokens", 10, "--stats-json", stats_file)
    assert r.returncode == 0, r.stderr
    stats = _stats(stats_file)
    prompt = list(b"Hello")
    expected = generate(model, prompt, 10)
    assert stats["prompt_token_ids"] == prompt
    assert stats["token_ids"] == expected
    assert stats["stop_reason"] == "max_new_tokens"
    assert (stats["max_seq_len"], stats["vocab_size"], stats["tokenizer"]) == (MAX_SEQ, 256, "bytes")
    # stdout is the prompt and the continuation, invalid UTF-8 replaced as Python does.
    text = bytes(prompt + expected).decode("utf-8", errors="replace")
    assert r.stdout.decode("utf-8") in (text, text + "\n")
    err = r.stderr.decode()
    assert "stopped: 10 new tokens (--max-new-tokens)" in err
    for label in ("load", "prompt", "first token", "decode", "peak RSS"):
        assert f"\n{label}" in "\n" + err, err


def test_llama_llama2c_tokenizer_greedy_until_eos_or_end_of_context(cli, tmp_path):
    model = tiny_llama(use_custom_op=False)
    pte = _export(model, tmp_path / "llama.pte", llm_metadata_methods(model, bos_id=1, eos_ids=[2]))
    tokenizer = _llama2c_tokenizer(tmp_path / "tokenizer.bin", VOCAB)
    stats_file = tmp_path / "stats.json"
    r = _llm(cli, "--model", pte, "--tokenizer", tokenizer, "--prompt", "the cat", "--temperature",
             "0", "--stats-json", stats_file, "--print-token-ids")
    assert r.returncode == 0, r.stderr
    stats = _stats(stats_file)
    prompt = stats["prompt_token_ids"]
    assert prompt[0] == 1  # BOS from get_bos_id()
    assert 2 < len(prompt) < 8  # merged pieces, not one token per byte
    expected = generate(model, prompt, MAX_SEQ, stop_token=2)
    assert stats["token_ids"] == expected
    err = r.stderr.decode()
    if expected[-1] == 2:
        assert stats["stop_reason"] == "eos" and "stopped: end of sequence (token 2)" in err
    else:
        assert len(expected) == MAX_SEQ - len(prompt) + 1
        assert stats["stop_reason"] == "end_of_context"
        assert f"stopped: end of context ({MAX_SEQ} tokens)" in err
    assert "token ids: " + " ".join(map(str, expected)) in err

    # --ignore-eos runs to the end of the context whatever the model says.
    r = _llm(cli, "--model", pte, "--tokenizer", tokenizer, "--prompt", "the cat", "--temperature",
             "0", "--ignore-eos", "--quiet", "--stats-json", stats_file)
    assert r.returncode == 0, r.stderr
    stats = _stats(stats_file)
    assert stats["token_ids"] == generate(model, prompt, MAX_SEQ)
    assert stats["stop_reason"] == "end_of_context"


def test_program_without_metadata_uses_shapes(cli, tmp_path):
    model = tiny_gpt(use_custom_op=False, vocab_size=256, seed=3)
    pte = _export(model, tmp_path / "plain.pte")
    stats_file = tmp_path / "stats.json"
    r = _llm(cli, "--model", pte, "--tokenizer", "bytes", "--prompt", "abc", "--temperature", "0",
             "--no-stats", "--stats-json", stats_file)
    assert r.returncode == 0, r.stderr
    stats = _stats(stats_file)
    assert stats["max_seq_len"] == MAX_SEQ and stats["vocab_size"] == 256
    assert stats["token_ids"] == generate(model, list(b"abc"), MAX_SEQ)
    assert stats["stop_reason"] == "end_of_context"
    assert "peak RSS" not in r.stderr.decode()
    assert stats["time_to_first_token_ms"] > 0 and stats["prefill_tokens_per_s"] > 0
    assert stats["decode_tokens_per_s"] > 0 and stats["peak_rss_bytes"] > 0


def test_stop_string_is_not_printed(cli, tmp_path):
    model = tiny_gpt(use_custom_op=False, vocab_size=256)
    pte = _export(model, tmp_path / "gpt.pte", llm_metadata_methods(model, tokenizer="bytes"))
    stats_file = tmp_path / "stats.json"
    expected = generate(model, list(b"Hi"), 8)
    stop = bytes(expected[2:4])  # two tokens' bytes: the match spans a token boundary
    escaped = "".join(f"\\x{b:02x}" for b in stop)
    r = _llm(cli, "--model", pte, "--prompt", "Hi", "--temperature", "0", "--stop", escaped,
             "--no-echo", "--quiet", "--stats-json", stats_file)
    assert r.returncode == 0, r.stderr
    stats = _stats(stats_file)
    first = bytes(expected).find(stop)  # <= 2
    assert stats["stop_reason"] == "stop_string"
    assert stats["token_ids"] == expected[:first + 2]
    assert r.stderr == b""  # --quiet
    shown = bytes(expected[:first]).decode("utf-8", errors="replace")
    assert r.stdout.decode("utf-8") in (shown, shown + "\n")


def test_chat_keeps_the_conversation_in_the_cache(cli, tmp_path):
    model = tiny_gpt(use_custom_op=False, vocab_size=256, block_size=48)
    pte = _export(model, tmp_path / "gpt.pte", llm_metadata_methods(model, tokenizer="bytes"))
    stats_file = tmp_path / "stats.json"
    r = _llm(cli, "--model", pte, "--chat", "--temperature", "0", "--max-new-tokens", 3,
             "--stop", "unlikely-stop", "--stats-json", stats_file, stdin=b"ab\ncd\n")
    assert r.returncode == 0, r.stderr
    turns = _stats(stats_file)["turns"]
    assert len(turns) == 2
    first, second = turns
    assert first["prompt_token_ids"] == list(b"ab\n") and first["prompt_tokens"] == 3
    # The second turn feeds only the first reply's last token and its own text.
    assert second["prompt_token_ids"] == list(b"cd\n") and second["prompt_tokens"] == 4
    assert second["position"] == 3 + 3 + 3 + 3
    # The same greedy tokens as generating over the whole conversation at once.
    assert first["token_ids"] == generate(model, list(b"ab\n"), 3)
    history = list(b"ab\n") + first["token_ids"] + list(b"cd\n")
    assert second["token_ids"] == generate(model, history, 3)


def test_chat_stops_cleanly_at_the_end_of_the_context(cli, tmp_path):
    model = tiny_gpt(use_custom_op=False, vocab_size=256)
    pte = _export(model, tmp_path / "gpt.pte", llm_metadata_methods(model, tokenizer="bytes"))
    r = _llm(cli, "--model", pte, "--chat", "--temperature", "0", "--max-new-tokens", 4,
             "--stop", "unlikely-stop", "--no-stats", stdin=b"0123456789\n" * 4)
    assert r.returncode == 0, r.stderr
    assert f"stopped: end of context ({MAX_SEQ} tokens)" in r.stderr.decode()


def test_errors_are_one_line(cli, tmp_path):
    model = tiny_gpt(use_custom_op=False, vocab_size=256)
    pte = _export(model, tmp_path / "gpt.pte", llm_metadata_methods(model))
    missing = tmp_path / "missing.pte"
    _expect_error(_llm(cli, "--model", missing, "--tokenizer", "bytes", "--prompt", "a"),
                  str(missing))
    _expect_error(_llm(cli, "--model", pte, "--prompt", "a"), "--tokenizer")  # no hint
    no_tok = tmp_path / "none.model"
    _expect_error(_llm(cli, "--model", pte, "--tokenizer", no_tok, "--prompt", "a"), str(no_tok))
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x01\x00\x00\x00garbage")
    _expect_error(_llm(cli, "--model", pte, "--tokenizer", junk, "--prompt", "a"), str(junk))
    _expect_error(_llm(cli, "--model", pte, "--tokenizer", "bytes", "--prompt", "x" * 30),
                  "30 tokens", f"{MAX_SEQ} positions")
    _expect_error(_llm(cli, "--model", FIXTURES / "add.pte", "--tokenizer", "bytes",
                       "--prompt", "a"), "add.pte", "int64")
    _expect_error(_llm(cli, "--model", pte, "--tokenizer", "bytes", "--prompt", "a",
                       "--temperature", "-1"), "--temperature")


def test_vocabulary_mismatch(cli, tmp_path):
    model = tiny_llama(use_custom_op=False)  # 61 tokens
    pte = _export(model, tmp_path / "llama.pte", llm_metadata_methods(model))
    _expect_error(_llm(cli, "--model", pte, "--tokenizer", "bytes", "--prompt", "a"),
                  "vocabulary mismatch", "256", str(VOCAB))


def test_metadata_methods():
    model = tiny_llama(use_custom_op=False)
    assert llm_metadata_methods(model) == {"get_max_seq_len": MAX_SEQ, "get_vocab_size": VOCAB}
    full = llm_metadata_methods(model, bos_id=1, eos_ids=(2, 3), tokenizer="tokenizer.bin")
    assert full["get_bos_id"] == 1 and full["get_eos_ids"] == [2, 3]
    assert full["get_tokenizer"] == "tokenizer.bin"
    with pytest.raises(ValueError, match="EOS id 61"):
        llm_metadata_methods(model, eos_ids=[61])
    with pytest.raises(ValueError, match="bos_id"):
        llm_metadata_methods(model, bos_id=-2)


class _LastRow2d(torch.nn.Module):
    """Upstream's default program layout: logits [1, vocab] of the last position."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.config = model.config

    @property
    def max_seq_len(self):
        return self.model.max_seq_len

    def reset_cache(self):
        self.model.reset_cache()

    def forward(self, tokens, input_pos):
        return self.model(tokens, input_pos)[:, -1, :]


@pytest.mark.parametrize("make", [tiny_gpt, tiny_llama], ids=["gpt", "llama"])
@pytest.mark.parametrize("layout", ["last_3d", "last_2d"])
def test_last_position_logits_programs_generate_the_same_tokens(cli, tmp_path, make, layout):
    """A program that returns only the last position's logits ([1, 1, vocab]
    from export_llm(last_logits_only=True), or upstream's [1, vocab]) skips
    the classifier on every other prompt position; greedy decoding is
    unchanged, token for token, against generate() on the float model."""
    model = make(use_custom_op=True, vocab_size=256)
    meta = llm_metadata_methods(model, tokenizer="bytes")
    if layout == "last_3d":
        ep = export_llm(model, last_logits_only=True)
    else:
        model.last_logits_only = True
        ep = export_llm(_LastRow2d(model))
        model.last_logits_only = False
    out_shape = list(ep.graph_signature.user_outputs and
                     [n for n in ep.graph.nodes if n.op == "output"][0].args[0][0].meta["val"].shape)
    assert out_shape[-1] == 256 and len(out_shape) == (3 if layout == "last_3d" else 2)
    if layout == "last_3d":
        assert out_shape[1] == 1
    pte = tmp_path / "last.pte"
    torchlight.to_edge(ep, constant_methods=meta).to_executorch().save(str(pte))
    stats_file = tmp_path / "stats.json"
    r = _llm(cli, "--model", pte, "--prompt", "Hello there", "--temperature", "0",
             "--max-new-tokens", 8, "--stats-json", stats_file, "--quiet")
    assert r.returncode == 0, r.stderr
    prompt = list(b"Hello there")
    assert _stats(stats_file)["token_ids"] == generate(model, prompt, 8)
