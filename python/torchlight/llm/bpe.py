"""Byte-level BPE: a trainer and an encoder, saved as a Hugging Face
tokenizer.json the C++ runner's HfTokenizer reads.

    merges = train_bpe(text, vocab_size=4096)
    tok = ByteLevelBPE(merges)
    ids = tok.encode("The jury said")        # same ids as the C++ tokenizer
    tok.save_tokenizer_json("tokenizer.json")

Ids 0..255 are the bytes (id b = byte b, so a byte-level model's ids keep
their meaning); each merge whose bytes are new adds the next id (a merge
whose result spells an existing token, e.g. "a"+"bc" after "ab"+"c",
produces that token). Text is split into
pieces with GPT-2's pre-tokenizer regex first, and merges never cross a
piece's edge, as in GPT-2 and the `tokenizers` library's ByteLevel
pre-tokenizer. Encoding applies the lowest-ranked merge present in a piece
(leftmost first) until none applies: the `tokenizers` BPE model's order.

The regex: Python's `re` lacks \\p{L} / \\p{N}, so letters are [^\\W\\d_] and
numbers \\d. These equal GPT-2's classes on ASCII and Latin letters, but differ
for the few numeric characters that are not decimal digits (e.g. "²", "½").
The Brown corpus is ASCII.
"""

from __future__ import annotations

import heapq
import json
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Dict, Iterable, List, Sequence, Tuple, Union

GPT2_PATTERN = (r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+"
                r"|\s+(?!\S)|\s+")
# The same with classes Python's re has (see the module docstring).
_PIECES = re.compile(r"'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?(?:[^\s\w]|_)+"
                     r"|\s+(?!\S)|\s+")

Merge = Tuple[int, int]


def pre_tokenize(text: str) -> List[str]:
    """GPT-2's pieces of `text`; they concatenate back to `text`."""
    return _PIECES.findall(text)


def byte_to_unicode() -> Dict[int, str]:
    """GPT-2's printable stand-in for each byte, used in ByteLevel vocabularies:
    printable Latin-1 bytes stand for themselves, the rest map to 256 + n."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) \
        + list(range(ord("®"), ord("ÿ") + 1))
    table, extra = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


def train_bpe(text: Union[str, Iterable[str]], vocab_size: int, min_count: int = 2
              ) -> List[Merge]:
    """Learns merges from `text` (a string, or pieces of text pre-tokenized
    independently) until there are vocab_size tokens: each step merges the
    pair of adjacent tokens seen most often in the corpus (ties: the
    smallest pair of ids), as long as it occurs at least min_count times."""
    if vocab_size < 256:
        raise ValueError(f"train_bpe: vocab_size {vocab_size} is below the 256 byte tokens")
    counts: Counter = Counter()
    for chunk in ([text] if isinstance(text, str) else text):
        counts.update(pre_tokenize(chunk))
    words: List[List[int]] = []
    freqs: List[int] = []
    for piece, n in counts.items():
        words.append(list(piece.encode("utf-8")))
        freqs.append(n)

    pair_count: Dict[Merge, int] = defaultdict(int)
    where: Dict[Merge, set] = defaultdict(set)  # pair -> indices of words holding it
    for w, (ids, n) in enumerate(zip(words, freqs)):
        for pair in zip(ids, ids[1:]):
            pair_count[pair] += n
            where[pair].add(w)
    # Max-heap of (-count, pair); entries whose count changed are skipped
    # when popped and were re-pushed with the new count.
    heap = [(-c, p) for p, c in pair_count.items()]
    heapq.heapify(heap)

    merges: List[Merge] = []
    spelled: List[bytes] = [bytes([b]) for b in range(256)]
    ids_of: Dict[bytes, int] = {t: i for i, t in enumerate(spelled)}
    while len(spelled) < vocab_size and heap:
        neg, pair = heapq.heappop(heap)
        if pair_count.get(pair, 0) != -neg:
            continue
        if -neg < min_count:
            break
        joined = spelled[pair[0]] + spelled[pair[1]]
        new_id = ids_of.get(joined, len(spelled))
        if new_id == len(spelled):
            spelled.append(joined)
            ids_of[joined] = new_id
        merges.append(pair)
        touched = set()
        for w in list(where[pair]):
            ids, n = words[w], freqs[w]
            for old in zip(ids, ids[1:]):
                pair_count[old] -= n
                touched.add(old)
            merged = _merge_all(ids, pair, new_id)
            words[w] = merged
            for new in zip(merged, merged[1:]):
                pair_count[new] += n
                where[new].add(w)
                touched.add(new)
        for p in touched:
            c = pair_count[p]
            if c <= 0:
                pair_count.pop(p, None)
                where.pop(p, None)
            else:
                heapq.heappush(heap, (-c, p))
        pair_count.pop(pair, None)
        where.pop(pair, None)
    return merges


def _merge_all(ids: Sequence[int], pair: Merge, new_id: int) -> List[int]:
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


class ByteLevelBPE:
    """Encoder / decoder for merges from train_bpe (or a loaded tokenizer.json)."""

    def __init__(self, merges: Sequence[Merge]):
        self.merges = [tuple(m) for m in merges]
        self.rank = {m: r for r, m in enumerate(self.merges)}
        self.token_bytes: List[bytes] = [bytes([b]) for b in range(256)]
        ids_of = {t: i for i, t in enumerate(self.token_bytes)}
        self.result: List[int] = []  # merge rank -> the token it produces
        for r, (a, b) in enumerate(self.merges):
            if a >= len(self.token_bytes) or b >= len(self.token_bytes):
                raise ValueError(f"ByteLevelBPE: merge {r} ({a}, {b}) names a token defined "
                                 "after it")
            joined = self.token_bytes[a] + self.token_bytes[b]
            if joined not in ids_of:
                ids_of[joined] = len(self.token_bytes)
                self.token_bytes.append(joined)
            self.result.append(ids_of[joined])
        self._cache: Dict[str, List[int]] = {}

    @property
    def vocab_size(self) -> int:
        return len(self.token_bytes)

    def _encode_piece(self, piece: str) -> List[int]:
        ids = list(piece.encode("utf-8"))
        while len(ids) > 1:
            best = min(zip(ids, ids[1:]), key=lambda p: self.rank.get(p, 1 << 30))
            r = self.rank.get(best)
            if r is None:
                break
            ids = _merge_all(ids, best, self.result[r])
        return ids

    def encode(self, text: str) -> List[int]:
        out: List[int] = []
        for piece in pre_tokenize(text):
            ids = self._cache.get(piece)
            if ids is None:
                ids = self._encode_piece(piece)
                self._cache[piece] = ids
            out.extend(ids)
        return out

    def decode(self, ids: Iterable[int]) -> str:
        return b"".join(self.token_bytes[int(i)] for i in ids).decode("utf-8", errors="replace")

    def tokenizer_json(self) -> dict:
        """The Hugging Face tokenizer.json for this vocabulary: ByteLevel
        pre-tokenizer (GPT-2 regex, no prefix space), BPE model, ByteLevel
        decoder, no added tokens."""
        shown = byte_to_unicode()

        def spell(i: int) -> str:
            return "".join(shown[b] for b in self.token_bytes[i])

        vocab = {spell(i): i for i in range(self.vocab_size)}
        if len(vocab) != self.vocab_size:
            raise ValueError("ByteLevelBPE: two tokens spell the same bytes")
        return {
            "version": "1.0",
            "truncation": None,
            "padding": None,
            "added_tokens": [],
            "normalizer": None,
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False,
                              "trim_offsets": True, "use_regex": True},
            "post_processor": None,
            "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                        "use_regex": True},
            "model": {"type": "BPE", "dropout": None, "unk_token": None,
                      "continuing_subword_prefix": None, "end_of_word_suffix": None,
                      "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                      "vocab": vocab,
                      "merges": [[spell(a), spell(b)] for a, b in self.merges]},
        }

    def save_tokenizer_json(self, path: Union[str, Path]) -> None:
        Path(path).write_text(json.dumps(self.tokenizer_json(), ensure_ascii=False, indent=1)
                              + "\n", encoding="utf-8")

    @classmethod
    def load_tokenizer_json(cls, path: Union[str, Path]) -> "ByteLevelBPE":
        """Reads a tokenizer.json written by save_tokenizer_json."""
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        model = doc.get("model", {})
        if model.get("type") != "BPE" or (doc.get("pre_tokenizer") or {}).get("type") != "ByteLevel":
            raise ValueError(f"{path}: not a byte-level BPE tokenizer.json")
        vocab: Dict[str, int] = model["vocab"]
        shown = byte_to_unicode()
        for b in range(256):
            if vocab.get(shown[b]) != b:
                raise ValueError(f"{path}: byte {b} is not token {b}")
        merges = []
        for m in model["merges"]:
            a, b = m.split(" ", 1) if isinstance(m, str) else m
            merges.append((vocab[a], vocab[b]))
        tok = cls(merges)
        if tok.tokenizer_json()["model"]["vocab"] != vocab:
            raise ValueError(f"{path}: the vocabulary is not the one its merges build")
        return tok
