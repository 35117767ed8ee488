"""The plain-decomposition models as .pte programs in the C++ runtime:
prefill then decode, the KV cache kept in the program's mutable buffers
between calls, logits equal to eager PyTorch (atol 1e-5, rtol 1e-5)."""

from __future__ import annotations

import pytest
import torch

import torchlight
from llm_helpers import MAX_SEQ, VOCAB, tiny_gpt, tiny_llama
from torchlight.llm import export_llm, generate


def _pte(model, tmp_path):
    prog = torchlight.to_edge(export_llm(model)).to_executorch(torchlight.ExecutorchBackendConfig())
    path = tmp_path / "model.pte"
    prog.save(str(path))
    return path


@pytest.mark.parametrize("make", [tiny_gpt, tiny_llama], ids=["gpt", "llama"])
def test_pte_prefill_and_decode_match_eager(runtime, tmp_path, make):
    model = make(use_custom_op=False)
    module = runtime.load(str(_pte(model, tmp_path)))
    tokens = torch.randint(0, VOCAB, (1, MAX_SEQ))
    with torch.no_grad():
        expected = model(tokens)
    steps = [(0, 9), (9, 10), (10, 11), (11, MAX_SEQ)]
    outs = []
    for a, b in steps:
        (logits,) = module.run("forward", [tokens[:, a:b], torch.arange(a, b)])
        outs.append(torch.as_tensor(logits))
    torch.testing.assert_close(torch.cat(outs, dim=1), expected, atol=1e-5, rtol=1e-5)


def test_pte_greedy_tokens_match_generate(runtime, tmp_path):
    """The runner loop over the .pte gives generate()'s greedy tokens."""
    model = tiny_llama(use_custom_op=False)
    module = runtime.load(str(_pte(model, tmp_path)))
    prompt = [7, 1, 30, 2]
    expected = generate(model, prompt, max_new_tokens=10)
    (logits,) = module.run("forward", [torch.tensor([prompt]), torch.arange(len(prompt))])
    got = []
    for pos in range(len(prompt), len(prompt) + 10):
        got.append(int(torch.as_tensor(logits)[0, -1].argmax()))
        (logits,) = module.run("forward", [torch.tensor([[got[-1]]]), torch.tensor([pos])])
    assert got == expected
