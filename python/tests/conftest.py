"""Fixtures: the runtime bindings (built by CMake into build/<cfg>/python)."""

from __future__ import annotations

import pytest
import torch

import torchlight.runtime


@pytest.fixture(scope="session")
def runtime():
    """torchlight.runtime, with its native module loaded. The test runner
    builds build/release first; a missing module is a failure, not a skip,
    so a broken bindings build cannot pass unnoticed."""
    try:
        torchlight.runtime.extension()
    except torchlight.runtime.RuntimeNotBuiltError as e:
        pytest.fail(str(e))
    return torchlight.runtime


@pytest.fixture(scope="session")
def kernels(runtime):
    """Names of the kernels the runtime build registers."""
    return set(runtime.registered_kernels())


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
