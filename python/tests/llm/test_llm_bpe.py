"""The byte-level BPE trainer and encoder (torchlight.llm.bpe) and the
tokenizer.json it writes: the C++ runner's HfTokenizer, reading that file,
gives the ids the Python encoder (the one the shipped model was trained with)
gives, on the Brown validation split (when fetched) and on the repository's
own documentation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import torchlight
from torchlight.llm import GPT, GPTConfig, export_llm
from torchlight.llm.bpe import ByteLevelBPE, pre_tokenize, train_bpe
from torchlight.llm.corpus import train_val_split
from torchlight.llm.metadata import llm_metadata_methods

REPO = Path(__file__).resolve().parents[3]
CLI = REPO / "build" / "release" / "bin" / "torchlight"
SHIPPED = REPO / "examples" / "llm" / "models" / "brown_gpt_bpe.pt"
SHIPPED_TOKENIZER = SHIPPED.with_suffix(".tokenizer.json")
CORPUS = Path(os.environ.get("TORCHLIGHT_ASSETS_DIR", "/var/cache/torchlight/assets")) \
    / "corpus" / "brown"


def test_pre_tokenizer_pieces_are_gpt2s():
    assert pre_tokenize("He's  gone, 42 times!\n\nOK") == \
        ["He", "'s", " ", " gone", ",", " 42", " times", "!", "\n", "\n", "OK"]


def test_training_merges_the_most_frequent_pair_first():
    text = "low lower lowest " * 5 + "newer wider " * 3 + "the cat sat on the mat " * 4
    pairs = {}
    for piece in pre_tokenize(text):
        raw = piece.encode()
        for pair in zip(raw, raw[1:]):
            pairs[pair] = pairs.get(pair, 0) + 1
    # Most frequent; ties go to the smallest pair of ids.
    first = min(pairs, key=lambda p: (-pairs[p], p))
    merges = train_bpe(text, vocab_size=260)
    assert merges[0] == first
    tok = ByteLevelBPE(merges)
    assert tok.vocab_size == 260
    assert tok.token_bytes[256] == bytes(first)
    ids = tok.encode("lowest")
    assert tok.decode(ids) == "lowest" and len(ids) < len("lowest")


def test_encode_decode_round_trip_and_json_reload(tmp_path):
    text = ("The jury said it did find that the city's election was conducted. " * 20 +
            "Numbers 1961 and 123, tabs\tand  spaces \n\n end.")
    tok = ByteLevelBPE(train_bpe(text, vocab_size=300))
    sample = "The city's jury found 1961 reasons\t  to say: no!\n"
    assert tok.decode(tok.encode(sample)) == sample
    path = tmp_path / "tokenizer.json"
    tok.save_tokenizer_json(path)
    again = ByteLevelBPE.load_tokenizer_json(path)
    assert again.merges == tok.merges and again.encode(sample) == tok.encode(sample)
    doc = json.loads(path.read_text())
    assert doc["pre_tokenizer"]["type"] == "ByteLevel" and doc["model"]["type"] == "BPE"
    assert len(doc["model"]["vocab"]) == tok.vocab_size


def test_too_small_a_vocabulary_is_refused():
    with pytest.raises(ValueError, match="below the 256 byte tokens"):
        train_bpe("abc", vocab_size=100)


def _texts():
    texts = [(REPO / "README.md").read_text(encoding="utf-8"),
             (REPO / "examples" / "llm" / "README.md").read_text(encoding="utf-8")]
    if (CORPUS / "ca01").exists():
        texts.append(train_val_split(CORPUS)[1])
    return texts


def _chunks(text: str, tok: ByteLevelBPE, most: int):
    """Runs of whole lines of at most `most` tokens, split only before a
    line that starts with a non-space character: there a pre-tokenizer piece
    always ends, so the chunks' ids concatenate to the text's."""
    lines = text.splitlines(keepends=True)
    chunk, count = "", 0
    for i, line in enumerate(lines):
        n = len(tok.encode(line))
        if chunk and count + n > most and not line[:1].isspace():
            yield chunk
            chunk, count = "", 0
        chunk += line
        count += n
    if chunk:
        yield chunk


def test_cpp_tokenizer_gives_the_python_encoders_ids(tmp_path):
    tok = ByteLevelBPE.load_tokenizer_json(SHIPPED_TOKENIZER)
    # A tiny model with the tokenizer's vocabulary: the runner needs a
    # program; only the prompt's ids (from --stats-json) are compared.
    model = GPT(GPTConfig(block_size=4096, vocab_size=tok.vocab_size, n_layer=1, n_head=1,
                          n_embd=8)).eval()
    pte = tmp_path / "tiny.pte"
    program = torchlight.to_edge(export_llm(model, last_logits_only=True),
                                 constant_methods=llm_metadata_methods(model)).to_executorch()
    program.save(str(pte))
    stats = tmp_path / "stats.json"
    compared = 0
    for text in _texts():
        expected, got = tok.encode(text), []
        for chunk in _chunks(text, tok, 1000):
            r = subprocess.run([str(CLI), "llm", "--model", str(pte), "--tokenizer",
                                str(SHIPPED_TOKENIZER), "--prompt", chunk, "--max-new-tokens",
                                "1", "--temperature", "0", "--quiet", "--stats-json", str(stats)],
                               capture_output=True, timeout=60)
            assert r.returncode == 0, r.stderr.decode()
            got += json.loads(stats.read_text())["prompt_token_ids"]
        assert got == expected
        compared += len(expected)
    assert compared > 5000


def test_shipped_model_runs_with_the_tokenizer_its_program_names(tmp_path):
    """The demo's path: export_gpt.py puts the tokenizer.json beside the .pte
    and names it in get_tokenizer(); `torchlight llm` then needs no
    --tokenizer, and its greedy text is PyTorch's."""
    pte = tmp_path / "demo" / "model.pte"
    r = subprocess.run([sys.executable, str(REPO / "examples" / "llm" / "export_gpt.py"),
                        "--checkpoint", str(SHIPPED), "--pte", str(pte), "--custom-op",
                        "--prompt", "The jury said", "--tokens", "48"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert (pte.parent / SHIPPED_TOKENIZER.name).read_bytes() == SHIPPED_TOKENIZER.read_bytes()
    eager_text = r.stdout.rstrip("\n")
    r = subprocess.run([str(CLI), "llm", "--model", str(pte), "--prompt", "The jury said",
                        "--temperature", "0", "--max-new-tokens", "48", "--quiet"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.rstrip("\n") == eager_text
    assert len(eager_text.split()) > 20  # 48 subword tokens of text
