"""Selective build from programs (tools/selective/build_selective.py, which
`./torchlight build --ops-from` runs): the runner it builds for add.pte runs
add.pte, registers nothing else, and refuses a program needing another
operator, naming it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers import FIXTURES, REPO

BUILD_DIR = Path(os.environ.get("TORCHLIGHT_BUILD_DIR", REPO / "build" / "release"))
SCRIPT = REPO / "tools" / "selective" / "build_selective.py"


def build_selective(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--build-dir", str(BUILD_DIR), *args],
                          capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def add_runner():
    if not (BUILD_DIR / "CMakeCache.txt").is_file():
        pytest.fail(f"{BUILD_DIR} is not a configured build")
    result = build_selective("--name", "test_add", "--ops-from", str(FIXTURES / "add.pte"))
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout, BUILD_DIR / "selective" / "test_add" / "torchlight_run"


def test_runner_registers_only_the_programs_operators(add_runner):
    _, runner = add_runner
    listed = subprocess.run([str(runner), "--list-kernels"], capture_output=True, text=True, check=True)
    assert listed.stdout.split() == ["aten::add.out"]


def test_runner_runs_the_program(add_runner, tmp_path):
    _, runner = add_runner
    a, b = np.array([1.5], np.float32), np.array([-4.25], np.float32)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    out = tmp_path / "out.npy"
    result = subprocess.run([str(runner), str(FIXTURES / "add.pte"), "--input", str(tmp_path / "a.npy"),
                             "--input", str(tmp_path / "b.npy"), "--output", str(out)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    np.testing.assert_array_equal(np.load(out), a + b)


def test_runner_refuses_a_program_with_another_operator(add_runner):
    _, runner = add_runner
    # 3*x + 2: aten::mul.out, which the runner was not built with.
    result = subprocess.run([str(runner), str(FIXTURES / "linear_constant_buffer.pte")],
                            capture_output=True, text=True)
    assert result.returncode != 0
    assert "aten::mul.out" in result.stderr


def test_sizes_are_reported_and_smaller_than_every_kernel(add_runner):
    stdout, _ = add_runner
    sizes = dict(re.findall(r"^  (this runner|the same runner, every kernel|the full torchlight CLI)"
                            r".*?([0-9.]+) KB$", stdout, re.M))
    assert set(sizes) == {"this runner", "the same runner, every kernel", "the full torchlight CLI"}, stdout
    assert float(sizes["this runner"]) < float(sizes["the same runner, every kernel"]) / 4


def test_an_operator_no_library_has_is_named():
    result = build_selective("--name", "test_unknown", "--ops", "aten::add.out,my_ns::no_such_op.out")
    assert result.returncode != 0
    assert "my_ns::no_such_op.out" in result.stderr


def test_a_delegated_program_gets_its_backend(add_runner, tmp_path):
    # Wholly delegated to XNNPACK: no operators, one backend.
    result = build_selective("--name", "test_mlp", "--ops-from", str(FIXTURES / "mlp_xnnpack.pte"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "backends XnnpackBackend" in result.stdout
    runner = BUILD_DIR / "selective" / "test_mlp" / "torchlight_run"
    x = np.fromfile(FIXTURES / "mlp_xnnpack.input0.bin", dtype="<f4").reshape(2, 16)
    expected = np.fromfile(FIXTURES / "mlp_xnnpack.output0.bin", dtype="<f4").reshape(2, 4)
    np.save(tmp_path / "x.npy", x)
    run = subprocess.run([str(runner), str(FIXTURES / "mlp_xnnpack.pte"), "--input", str(tmp_path / "x.npy"),
                          "--output", str(tmp_path / "y.npy")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), expected, rtol=1e-5, atol=1e-5)
    # The add-only runner has no backend: the delegate is refused, named.
    refused = subprocess.run([str(add_runner[1]),
                              str(FIXTURES / "mlp_xnnpack.pte"), "--input", str(tmp_path / "x.npy")],
                             capture_output=True, text=True)
    assert refused.returncode != 0
    assert "XnnpackBackend" in refused.stderr
