"""torchlight.llm.greedy_parity: an export_llama program against PyTorch
with teacher forcing; a tie-aware verdict. The small shape of
test_llm_export_llama; the same program compared with a model of other
weights must report mismatches (exit 1), so the check can fail."""

from __future__ import annotations

import pytest

from llm_helpers import export_llama_program, write_llama_params
from torchlight.llm import greedy_parity



@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    d = tmp_path_factory.mktemp("parity")
    flags = ["-p", str(write_llama_params(d)), "--max_seq_length", "32", "-kv",
             "--use_sdpa_with_kv_cache", "-X", "-qmode", "8da4w", "-G", "32", "-E", "4,32"]
    return export_llama_program(flags, d / "q.pte"), flags


def test_program_matches_pytorch_at_every_step(exported, capsys, runtime):
    pte, flags = exported
    code = greedy_parity.main(["--pte", str(pte), "--prompt-tokens", "1,15,30,7",
                               "--new-tokens", "12", "--", *flags])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "steps: 12" in out and "mismatches: 0" in out, out
    assert "logits outside tolerance: 0" in out, out
    assert "12 of 12 leading tokens equal" in out, out


def test_other_weights_are_reported_as_mismatches(exported, capsys, runtime):
    pte, flags = exported
    code = greedy_parity.main(["--pte", str(pte), "--prompt-tokens", "1,15,30,7",
                               "--new-tokens", "12", "--", *flags, "--seed", "12345"])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "logits outside tolerance: 0" not in out, out
