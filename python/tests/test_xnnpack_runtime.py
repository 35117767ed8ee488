"""The XNNPACK delegate runtime through the Python bindings, on upstream's
release-0.5 MLP program (Linear-ReLU-Linear wholly delegated)."""

from __future__ import annotations

import numpy as np
import torch

from helpers import FIXTURES


def test_xnnpack_backend_is_registered(runtime):
    assert "XnnpackBackend" in runtime.registered_backends()


def test_upstream_mlp_matches_eager_output(runtime):
    x = torch.from_numpy(np.fromfile(FIXTURES / "mlp_xnnpack.input0.bin", dtype="<f4").reshape(2, 16))
    expected = torch.from_numpy(np.fromfile(FIXTURES / "mlp_xnnpack.output0.bin",
                                            dtype="<f4").reshape(2, 4))
    module = runtime.load(FIXTURES / "mlp_xnnpack.pte")
    assert module.method_meta("forward")["backends"] == ["XnnpackBackend"]
    for _ in range(2):  # The second call reuses the runtime built at load.
        (out,) = module.forward(x)
        assert out.shape == (2, 4)
        scale = expected.abs().max().item()
        assert (out - expected).abs().max().item() <= 1e-4 * scale
