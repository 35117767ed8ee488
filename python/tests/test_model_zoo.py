"""The model zoo: each model exported and run by the C++ runtime, outputs
compared with eager PyTorch within a per-model tolerance.

A model whose operators do not all have kernels yet is marked xfail, with
the missing operators computed by the exporter's kernel check against the
runtime build, so it turns green by itself as kernels land (issue #4).
Export itself must always succeed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Tuple

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torchlight


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)  # weight [64, 32]
        self.fc2 = nn.Linear(64, 64)  # weight [64, 64]
        self.fc3 = nn.Linear(64, 10)  # weight [10, 64]

    def forward(self, x):  # x: [batch, 32]
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)   # weight [8, 3, 3, 3]
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2)   # weight [16, 8, 3, 3]
        self.fc = nn.Linear(16 * 7 * 7, 10)          # weight [10, 784]

    def forward(self, x):  # x: [batch, 3, 32, 32]
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)  # [batch, 8, 16, 16]
        x = F.relu(self.conv2(x))                              # [batch, 16, 7, 7]
        return self.fc(torch.flatten(x, 1))


class CausalSelfAttention(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)  # weight [3 * dim, dim]
        self.proj = nn.Linear(dim, dim)     # weight [dim, dim]

    def forward(self, x):  # x: [batch, seq, dim]
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        # Each: [batch, heads, seq, dim / heads]
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(c // self.heads)  # [b, h, t, t]
        mask = torch.ones(t, t, dtype=torch.bool).tril()
        scores = scores.masked_fill(~mask, float("-inf"))
        y = F.softmax(scores, dim=-1) @ v  # [b, h, t, dim / heads]
        return self.proj(y.transpose(1, 2).reshape(b, t, c))


class Block(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads)
        self.ln2 = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, 4 * dim)    # weight [4 * dim, dim]
        self.out = nn.Linear(4 * dim, dim)   # weight [dim, 4 * dim]

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab: int = 64, dim: int = 32, heads: int = 4, layers: int = 2,
                 context: int = 16):
        super().__init__()
        self.tokens = nn.Embedding(vocab, dim)     # weight [vocab, dim]
        self.positions = nn.Embedding(context, dim)  # weight [context, dim]
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)  # weight [vocab, dim]

    def forward(self, idx):  # idx: [batch, seq] int64
        t = idx.shape[1]
        x = self.tokens(idx) + self.positions(torch.arange(t))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))  # logits: [batch, seq, vocab]


class LSTMClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(16, 32, num_layers=2, batch_first=True)
        self.fc = nn.Linear(32, 5)  # weight [5, 32]

    def forward(self, x):  # x: [batch, seq, 16]
        out, _ = self.lstm(x)
        return self.fc(out[:, -1])


def _mobilenet_v2():
    import torchvision

    return torchvision.models.mobilenet_v2(weights=None, num_classes=100)


def _resnet18():
    import torchvision

    return torchvision.models.resnet18(weights=None, num_classes=100)


@dataclass
class ZooModel:
    make: Callable[[], nn.Module]
    inputs: Callable[[], Tuple[torch.Tensor, ...]]
    rtol: float
    atol: float


ZOO = {
    "mlp": ZooModel(MLP, lambda: (torch.randn(4, 32),), 1e-5, 1e-5),
    "cnn": ZooModel(CNN, lambda: (torch.randn(2, 3, 32, 32),), 1e-4, 1e-5),
    "mobilenet_v2": ZooModel(_mobilenet_v2, lambda: (torch.randn(1, 3, 96, 96),), 1e-3, 1e-4),
    "resnet18": ZooModel(_resnet18, lambda: (torch.randn(1, 3, 64, 64),), 1e-3, 1e-4),
    "gpt": ZooModel(GPT, lambda: (torch.randint(0, 64, (2, 16)),), 1e-4, 1e-4),
    "lstm": ZooModel(LSTMClassifier, lambda: (torch.randn(2, 10, 16),), 1e-4, 1e-5),
}


def _randomise_batch_norm(model: nn.Module) -> None:
    # Fresh BatchNorm statistics are 0/1, which would hide a wrong kernel.
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)


@pytest.mark.parametrize("name", sorted(ZOO))
def test_zoo_model_matches_eager(runtime, kernels, name):
    spec = ZOO[name]
    model = spec.make().eval()
    with torch.no_grad():
        _randomise_batch_norm(model)
    inputs = spec.inputs()
    ep = torch.export.export(model, inputs)
    prog = torchlight.to_edge(ep).to_executorch(
        torchlight.ExecutorchBackendConfig(check_kernels=False))
    missing = prog.missing_kernels(kernels)
    assert not missing, f"{len(missing)} operators have no kernel: {', '.join(missing)}"
    module = runtime.load(prog.buffer)
    with torch.no_grad():
        expected = model(*inputs)
    (actual,) = module.run("forward", list(inputs))
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    torch.testing.assert_close(actual, expected, rtol=spec.rtol, atol=spec.atol)
