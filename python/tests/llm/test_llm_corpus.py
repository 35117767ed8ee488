"""The Brown corpus reader that feeds examples/llm/train_gpt.py."""

from __future__ import annotations

import pytest

from torchlight.llm.corpus import brown_text, detokenize, sample_files, train_val_split


def test_detokenize_drops_tags_and_rejoins_punctuation():
    tagged = ("\tThe/at jury/nn said/vbd ``/`` it/pps did/dod ''/'' ,/, (/( and/cc so/rb )/) "
              "on/in 1/2/cd acre/nn ;/. **zg/fw done/vbn ?/.")
    assert detokenize(tagged) == 'The jury said "it did", (and so) on 1/2 acre; done?'


def test_samples_split_by_name_and_joined_by_sentence(tmp_path):
    for i in range(1, 21):
        (tmp_path / f"ca{i:02d}").write_text(f"\n\n\tSample/nn {i}/cd ./.\n\n\tMore/ap ./.\n")
    (tmp_path / "README").write_text("not a sample")
    assert [p.name for p in sample_files(tmp_path)][:2] == ["ca01", "ca02"]
    assert brown_text(sample_files(tmp_path)[:2]) == "Sample 1.\nMore.\n\nSample 2.\nMore.\n"
    train, val = train_val_split(tmp_path)
    assert val == "Sample 10.\nMore.\n\nSample 20.\nMore.\n"
    assert "Sample 10." not in train and train.count("More.") == 18


def test_missing_corpus_says_how_to_fetch_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="fetch_corpus.sh"):
        sample_files(tmp_path)
