"""Shared helpers for the exporter tests."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Sequence

import torch

import torchlight
from torchlight.pte import codegen

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "upstream"
SCHEMA = REPO / "schema" / "program.fbs"


def export(model: torch.nn.Module, inputs: Sequence, dynamic_shapes=None,
           config: torchlight.ExecutorchBackendConfig = None, partitioner=None):
    """model -> ExecutorchProgramManager through the public verbs."""
    ep = torch.export.export(model, tuple(inputs), dynamic_shapes=dynamic_shapes)
    edge = torchlight.to_edge(ep)
    if partitioner is not None:
        edge = edge.to_backend(partitioner)
    return edge.to_executorch(config)


def flatc_json(pte: bytes, tmp_path: Path) -> dict:
    """The program decoded by flatc against schema/program.fbs, as JSON."""
    path = tmp_path / "program.pte"
    path.write_bytes(pte)
    result = subprocess.run([codegen.flatc_path(), "--json", "--raw-binary", "--strict-json",
                             "--defaults-json", "-o", str(tmp_path), str(SCHEMA), "--", str(path)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr + result.stdout
    return json.loads((tmp_path / "program.json").read_text())


def as_tuple(value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def delegate_calls(prog) -> list:
    """(delegate entry, DelegateCall, processed bytes) for each delegate call
    of the first method of an ExecutorchProgramManager, in order."""
    from torchlight.pte import pte_file, schema

    f = pte_file.read_pte(prog.buffer)
    plan = f.program.execution_plan[0]
    found = []
    for instruction in plan.chains[0].instructions:
        call = instruction.instr_args
        if isinstance(call, schema.DelegateCall):
            delegate = plan.delegates[call.delegate_index]
            found.append((delegate, call, f.delegate_bytes(delegate.processed)))
    return found
