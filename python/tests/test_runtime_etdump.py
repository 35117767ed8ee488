"""ETDump tracing through the Python runtime: Module(etdump_path=...,
debug_buffer_size=...) writes upstream's .etdp and a debug buffer whose
tensors match eager PyTorch."""

from __future__ import annotations

import json
import pathlib
import struct
import subprocess

import numpy as np
import pytest
import torch

from helpers import export

SCHEMA = pathlib.Path(__file__).resolve().parents[2] / "devtools/etdump/etdump.fbs"


class MulAdd(torch.nn.Module):
    def forward(self, x, y):
        return x * 3 + y


def decode(path: pathlib.Path, tmp_path: pathlib.Path) -> dict:
    """The .etdp as JSON, through flatc and the schema (defaults included)."""
    subprocess.run(["flatc", "--json", "--raw-binary", "--size-prefixed", "--strict-json",
                    "--defaults-json", "-o", str(tmp_path), str(SCHEMA), "--", str(path)],
                   check=True)
    return json.loads((tmp_path / (path.stem + ".json")).read_text())


def tensor_at(debug: bytes, tensor: dict) -> np.ndarray:
    count = int(np.prod(tensor["sizes"]))
    return np.frombuffer(debug, dtype=np.float32, count=count,
                         offset=tensor["offset"]).reshape(tensor["sizes"])


def test_module_writes_etdump_with_intermediates_matching_eager(runtime, tmp_path):
    x, y = torch.randn(2, 3), torch.randn(2, 3)
    prog = export(MulAdd(), (x, y))
    etdp = tmp_path / "trace.etdp"
    module = runtime.load(prog.buffer, etdump_path=etdp, debug_buffer_size=4096)
    (out,) = module.forward(x, y)
    module.forward(x, y)
    data = etdp.read_bytes()
    (size,) = struct.unpack_from("<I", data, 0)
    assert size == len(data) - 4 and data[8:12] == b"ED00"
    dump = decode(etdp, tmp_path)
    blocks = dump["run_data"]
    assert [b["name"] for b in blocks] == ["Default", "Execute", "Execute"]
    names = [e["profile_event"]["name"] for e in blocks[1]["events"] if "profile_event" in e]
    assert names == ["native_call_mul.out", "OPERATOR_CALL", "native_call_add.out",
                     "OPERATOR_CALL", "Method::execute"]
    debug = pathlib.Path(module.debug_buffer_path).read_bytes()
    assert module.debug_buffer_path == str(etdp) + ".debug"
    values = [e["debug_event"] for e in blocks[2]["events"] if "debug_event" in e]
    assert len(values) == 3  # mul's output, add's output, the program output.
    assert [v["instruction_id"] for v in values[:2]] == [0, 1]
    assert values[2]["debug_entry"]["output"]["bool_val"] is True
    mul = tensor_at(debug, values[0]["debug_entry"]["tensor"])
    np.testing.assert_allclose(mul, (x * 3).numpy(), rtol=1e-6, atol=1e-6)
    for v in values[1:]:
        np.testing.assert_allclose(tensor_at(debug, v["debug_entry"]["tensor"]),
                                   (x * 3 + y).numpy(), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(out, x * 3 + y)


def test_too_small_debug_buffer_raises_naming_the_size(runtime, tmp_path):
    prog = export(MulAdd(), (torch.randn(2, 3), torch.randn(2, 3)))
    module = runtime.load(prog.buffer, etdump_path=tmp_path / "t.etdp", debug_buffer_size=16)
    with pytest.raises(RuntimeError, match=r"debug buffer is too small: 3 values were not "
                                           r"captured; it needs 152 bytes"):
        module.forward(torch.randn(2, 3), torch.randn(2, 3))


def test_etdump_options_are_checked(runtime, tmp_path):
    prog = export(MulAdd(), (torch.randn(2, 3), torch.randn(2, 3)))
    with pytest.raises(ValueError, match="need an etdump_path"):
        runtime.load(prog.buffer, debug_buffer_size=64)
    module = runtime.load(prog.buffer)
    with pytest.raises(RuntimeError, match="without an etdump_path"):
        module.write_etdump()
