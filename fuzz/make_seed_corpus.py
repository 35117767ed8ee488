"""Writes the fuzzers' seed corpora under fuzz/corpus/<target>/.

    ./torchlight exec python3 fuzz/make_seed_corpus.py

Seeds are small on purpose (the whole corpus stays well under 2 MB): each
covers one feature a fuzzer should start from. Programs come from our
exporter (plain kernels, constants in a segment and inline, control flow,
dtype casts (dim_order_ops), dynamic shapes, unplanned inputs, a delegate,
multiple methods, LLM metadata methods) plus the upstream-written fixtures; tokenizer seeds are built here
in each format, so no download is needed. Re-running rewrites the files;
the output is deterministic for a given torch version.
"""

from __future__ import annotations

import base64
import io
import json
import shutil
import struct
import sys
from pathlib import Path

import numpy as np
import torch
from torch.export import Dim

import torchlight
from torchlight.backends.test_backend import TestBackendPartitioner
from torchlight.llm.metadata import BOS_ID, EOS_IDS, MAX_SEQ_LEN, TOKENIZER, VOCAB_SIZE

FUZZ = Path(__file__).resolve().parent
REPO = FUZZ.parent
CORPUS = FUZZ / "corpus"
UPSTREAM = REPO / "tests" / "fixtures" / "upstream"
SEPARATOR = b"\n@@@@\n"  # fuzz_input.h kPartSeparator
TEXT = "Hello, world! It's 2026 — naïve café 🙂\n\tend".encode()

torch.manual_seed(0)


def export(model, inputs, dynamic_shapes=None, config=None, partitioner=None,
           constant_methods=None) -> bytes:
    ep = torch.export.export(model, tuple(inputs), dynamic_shapes=dynamic_shapes)
    edge = torchlight.to_edge(ep, constant_methods=constant_methods)
    if partitioner is not None:
        edge = edge.to_backend(partitioner)
    return edge.to_executorch(config).buffer


class AddMul(torch.nn.Module):
    def forward(self, x, y):
        return (x + y) * 2


class Linear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)

    def forward(self, x):
        return torch.relu(self.lin(x)).softmax(-1)


class Views(torch.nn.Module):
    def forward(self, x):
        y = x.reshape(2, 6).transpose(0, 1).contiguous()
        return torch.cat([y, y * 2], dim=1)[1:4], x.sum(dim=0, keepdim=True)


class Cond(torch.nn.Module):
    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda x: x * 2, lambda x: x - 1, (x,))


class Embedding(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(8, 4)

    def forward(self, ids):
        return self.emb(ids).mean(dim=1)


class Buffer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(2))

    def forward(self, x):
        self.count.add_(x)
        return self.count * 1


class Delegated(torch.nn.Module):
    def forward(self, x, y):
        a = x * 2 + y
        return a * a, a


class Casts(torch.nn.Module):
    """dtype casts and a filled empty: dim_order_ops, as to_edge writes them by default."""

    def forward(self, x, ids):
        filled = torch.empty(ids.shape[0], 3, dtype=torch.int64).fill_(2)
        return x.to(torch.float16), (ids.float() * x).int() + filled


class Tiny(torch.nn.Module):
    max_seq_len = 8

    class config:  # noqa: N801 - shaped like a GPT config for llm_metadata_methods
        vocab_size = 16

    def forward(self, tokens):
        return tokens.float().unsqueeze(-1).repeat(1, 1, 16)


def program_seeds() -> dict:
    two = (torch.randn(2, 3), torch.randn(2, 3))
    seeds = {
        "add_mul.pte": export(AddMul(), two),
        "linear_constant_segment.pte": export(Linear(), (torch.randn(2, 4),)),
        "linear_inline_constants.pte": export(
            Linear(), (torch.randn(2, 4),),
            config=torchlight.ExecutorchBackendConfig(extract_constants=False,
                                                      extended_header=False)),
        "views_cat_sum.pte": export(Views(), (torch.randn(3, 4),)),
        "cond.pte": export(Cond(), (torch.randn(3),)),
        "dynamic_batch.pte": export(AddMul(), two,
                                    dynamic_shapes=({0: Dim("b", max=4)}, {0: Dim("b", max=4)})),
        "unplanned_inputs.pte": export(
            AddMul(), two, config=torchlight.ExecutorchBackendConfig(alloc_graph_input=False)),
        "embedding.pte": export(Embedding(), (torch.tensor([[1, 2, 3]]),)),
        "casts_dim_order.pte": export(Casts(), (torch.randn(2, 3),
                                                torch.tensor([[1, 2, 3], [4, 5, 6]]))),
        "mutable_buffer.pte": export(Buffer(), (torch.randn(2),)),
        "delegated.pte": export(Delegated(), two, partitioner=TestBackendPartitioner()),
        "delegated_inline.pte": export(
            Delegated(), two, partitioner=TestBackendPartitioner(),
            config=torchlight.ExecutorchBackendConfig(extract_delegate_segments=False)),
    }
    for name in ["add.pte", "add_eh.pte", "linear_constant_buffer.pte", "mlp_xnnpack.pte"]:
        seeds["upstream_" + name] = (UPSTREAM / name).read_bytes()
    return seeds


def llm_metadata_seeds() -> dict:
    tokens = torch.zeros(1, 4, dtype=torch.long)
    full = {MAX_SEQ_LEN: 8, VOCAB_SIZE: 16, BOS_ID: 1, EOS_IDS: [2, 3], TOKENIZER: "bytes"}
    return {
        "tiny_full_metadata.pte": export(Tiny(), (tokens,), constant_methods=full),
        "tiny_some_metadata.pte": export(Tiny(), (tokens,),
                                         constant_methods={MAX_SEQ_LEN: 8, EOS_IDS: [2]}),
        "tiny_no_metadata.pte": export(Tiny(), (tokens,)),
    }


def npy_seeds() -> dict:
    arrays = {
        "f32_2x3.npy": np.arange(6, dtype=np.float32).reshape(2, 3),
        "f64_scalar.npy": np.array(3.5),
        "i64_4.npy": np.array([1, -2, 3, 1 << 40], dtype=np.int64),
        "u8_empty.npy": np.zeros((0, 3), dtype=np.uint8),
        "bool_2x2.npy": np.array([[True, False], [False, True]]),
        "f16_3.npy": np.array([1.5, -2, 65504], dtype=np.float16),
        "i32_2x1x2x1.npy": np.arange(4, dtype=np.int32).reshape(2, 1, 2, 1),
        "f32_fortran.npy": np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)),
        "f32_big_endian.npy": np.arange(3, dtype=">f4"),
    }
    seeds = {}
    for name, array in arrays.items():
        out = io.BytesIO()
        np.save(out, array, allow_pickle=False)
        seeds[name] = out.getvalue()
    out = io.BytesIO()
    np.lib.format.write_array(out, np.arange(3, dtype=np.int16), version=(2, 0))
    seeds["i16_v2.npy"] = out.getvalue()
    return seeds


# A small byte-level BPE: the 256 byte tokens plus merges of common pairs.
MERGES = [(b"l", b"l"), (b"e", b"ll"), (b"h", b"ell"), (b"o", b"r"), (b"w", b"or"), (b" ", b"w"),
          (b" w", b"or"), (b"i", b"t"), (b"'", b"s"), (b" ", b"t"), (b"e", b"n"), (b" t", b"e")]


def byte_level_unicode() -> dict:
    """GPT-2's bytes_to_unicode table."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + \
        list(range(0xAE, 0xFF + 1))
    chars = printable[:]
    n = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + n)
            n += 1
    return dict(zip(printable, [chr(c) for c in chars]))


def byte_level_bpe():
    """The 256 byte tokens plus MERGES, spelled in GPT-2's byte alphabet:
    (vocab {token: id}, merges [(left, right)] in rank order)."""
    table = byte_level_unicode()
    encode = lambda b: "".join(table[x] for x in b)  # noqa: E731
    vocab = {encode(bytes([b])): b for b in range(256)}
    merges = []
    for left, right in MERGES:
        merged = encode(left + right)
        if merged in vocab or encode(left) not in vocab or encode(right) not in vocab:
            continue
        vocab[merged] = len(vocab)
        merges.append((encode(left), encode(right)))
    return vocab, merges


def gpt2_seeds() -> dict:
    vocab, pairs = byte_level_bpe()
    merges = [f"{left} {right}" for left, right in pairs]
    with_special = dict(vocab)
    with_special["<|endoftext|>"] = len(with_special)
    merges_txt = ("#version: 0.2\n" + "\n".join(merges) + "\n").encode()
    return {
        "bytes_bpe_special.bin": b"\x00" + json.dumps(with_special).encode() + SEPARATOR +
        merges_txt + SEPARATOR + TEXT + b"<|endoftext|>",
        "bytes_bpe_plain.bin": b"\x01" + json.dumps(vocab).encode() + SEPARATOR + merges_txt +
        SEPARATOR + TEXT,
    }


def hf_seeds() -> dict:
    """tokenizer.json in the two layouts HfTokenizer reads: byte-level BPE
    (Llama 3: a Split regex then ByteLevel) and SentencePiece-style BPE
    (Llama 2: Prepend/Replace normalizers, byte fallback)."""
    vocab, pairs = byte_level_bpe()
    merges = [list(pair) for pair in pairs]
    cl100k = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
              "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
    byte_level = {
        "added_tokens": [{"id": len(vocab), "content": "<|endoftext|>", "special": True}],
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": cl100k}, "behavior": "Isolated",
             "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "use_regex": False}]},
        "decoder": {"type": "ByteLevel"},
        "model": {"type": "BPE", "ignore_merges": True, "vocab": vocab, "merges": merges},
    }
    sp_vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    sp_vocab.update({"<0x%02X>" % b: 3 + b for b in range(256)})
    for piece in ["\u2581", "h", "e", "l", "o", "w", "r", "d", "\u2581h", "ll", "\u2581he",
                  "llo", "\u2581hello"]:
        sp_vocab.setdefault(piece, len(sp_vocab))
    metaspace = {
        "added_tokens": [{"id": i, "content": t, "special": True}
                         for t, i in [("<unk>", 0), ("<s>", 1), ("</s>", 2)]],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "\u2581"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
        "pre_tokenizer": None,
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": True, "byte_fallback": True,
                  "vocab": sp_vocab,
                  "merges": ["\u2581 h", "l l", "\u2581h e", "ll o", "\u2581he llo"]},
    }
    config = json.dumps({"bos_token": "<s>", "eos_token": {"content": "</s>"}}).encode()
    return {
        "byte_level.bin": b"\x00" + json.dumps(byte_level).encode() + SEPARATOR + SEPARATOR +
        TEXT + b"<|endoftext|>",
        "metaspace.bin": b"\x00" + json.dumps(metaspace).encode() + SEPARATOR + config +
        SEPARATOR + TEXT + b"<s>hello w\xc3\xa9rld</s>",
        "metaspace_plain.bin": b"\x01" + json.dumps(metaspace).encode() + SEPARATOR + config +
        SEPARATOR + b"<s> hello",
    }


def tiktoken_seeds() -> dict:
    ranks = [bytes([b]) for b in range(256)]
    for left, right in MERGES:
        if left + right not in ranks:
            ranks.append(left + right)
    body = b"".join(base64.b64encode(tok) + b" %d\n" % i for i, tok in enumerate(ranks))
    return {
        "plain.bin": b"\x00" + body + SEPARATOR + TEXT,
        "r50k_specials.bin": b"\x01" + body + SEPARATOR + TEXT + b"<|endoftext|>",
        "cl100k_specials.bin": b"\x02" + body + SEPARATOR + TEXT + b"<|fim_prefix|>",
        "o200k_no_specials.bin": b"\x07" + body + SEPARATOR + TEXT,
    }


def llama2c_seeds() -> dict:
    """tokenizer.bin: i32 max_token_length, then per token f32 score, i32
    length, bytes. <unk>, <s>, </s>, 256 byte pieces, then merged pieces."""
    pieces = [(b"<unk>", 0.0), (b"<s>", 0.0), (b"</s>", 0.0)]
    pieces += [(b"<0x%02X>" % b, 0.0) for b in range(256)]
    words = [b" ", b"e", b"l", b"o", b"H", b"w", b"r", b"d", b"ll", b"ell", b"Hell", b"Hello",
             b" w", b" wor", b"or", b" world", b"\xe2\x96\x81", b"\xe2\x96\x81Hello"]
    pieces += [(w, -float(i)) for i, w in enumerate(words)]
    out = struct.pack("<i", max(len(p) for p, _ in pieces))
    for piece, score in pieces:
        out += struct.pack("<fi", score, len(piece)) + piece
    return {"byte_fallback.bin": out + SEPARATOR + TEXT}


def varint(n: int) -> bytes:
    out = b""
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out += bytes([byte | 0x80])
        else:
            return out + bytes([byte])


def field(number: int, wire: int, payload: bytes) -> bytes:
    return varint(number << 3 | wire) + payload


def sentencepiece_seeds() -> dict:
    """A ModelProto by hand: pieces (1) with piece (1), score (2), type (3:
    1 normal, 2 unknown, 3 control, 6 byte); trainer_spec (2) model_type (3)
    = 2 (BPE), byte_fallback (35); normalizer_spec (3) add_dummy_prefix (3)."""
    def piece(text: bytes, score: float, kind: int) -> bytes:
        body = field(1, 2, varint(len(text)) + text) + field(2, 5, struct.pack("<f", score)) + \
            field(3, 0, varint(kind))
        return field(1, 2, varint(len(body)) + body)

    model = piece(b"<unk>", 0, 2) + piece(b"<s>", 0, 3) + piece(b"</s>", 0, 3)
    model += b"".join(piece(b"<0x%02X>" % b, 0, 6) for b in range(256))
    for i, w in enumerate(["\u2581", "e", "l", "o", "H", "ll", "ell", "Hell", "\u2581Hello",
                           "\u2581w", "or", "\u2581wor", "\u2581world"]):
        model += piece(w.encode(), -float(i), 1)
    trainer = field(3, 0, varint(2)) + field(35, 0, varint(1))
    model += field(2, 2, varint(len(trainer)) + trainer)
    normalizer = field(3, 0, varint(1))
    model += field(3, 2, varint(len(normalizer)) + normalizer)
    return {"bpe_byte_fallback.bin": model + SEPARATOR + TEXT}


def write(target: str, seeds: dict) -> None:
    folder = CORPUS / target
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for name, data in seeds.items():
        (folder / name).write_bytes(data)
    print(f"{target}: {len(seeds)} seeds, {sum(map(len, seeds.values()))} bytes")


def main() -> int:
    programs = program_seeds()
    write("program", programs)
    write("method_meta", programs)
    write("llm_metadata", llm_metadata_seeds())
    write("npy", npy_seeds())
    write("tokenizer_gpt2_bpe", gpt2_seeds())
    write("tokenizer_tiktoken", tiktoken_seeds())
    write("tokenizer_hf", hf_seeds())
    write("tokenizer_llama2c", llama2c_seeds())
    write("tokenizer_sentencepiece", sentencepiece_seeds())
    return 0


if __name__ == "__main__":
    sys.exit(main())
