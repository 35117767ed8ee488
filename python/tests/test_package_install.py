"""The Python package installs with the standard tools into a venv and works
from another directory: `import torchlight`, the pybind runtime module it
carries, the schema (export) and the runtime running a program."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from helpers import FIXTURES, REPO

CHECK = textwrap.dedent("""
    import sys
    from pathlib import Path
    import torch
    import torchlight, torchlight.runtime
    venv = Path(sys.prefix).resolve()
    assert venv in Path(torchlight.__file__).resolve().parents, torchlight.__file__
    native = torchlight.runtime.extension()
    assert venv in Path(native.__file__).resolve().parents, native.__file__

    # Export needs the schema, which the checkout is not there to give.
    class AddOne(torch.nn.Module):
        def forward(self, x):
            return x + 1.0
    ep = torch.export.export(AddOne(), (torch.ones(3),))
    prog = torchlight.to_edge(ep).to_executorch()
    module = torchlight.runtime.load(prog.buffer)
    (y,) = module.run("forward", [torch.tensor([1.0, 2.0, 3.0])])
    assert torch.equal(y, torch.tensor([2.0, 3.0, 4.0])), y

    # And an upstream-written program, through upstream's spelling.
    from torchlight.extension.pybindings.portable_lib import _load_for_executorch
    m = _load_for_executorch(sys.argv[1])
    (z,) = m.forward([torch.tensor([1.5]), torch.tensor([2.0])])
    assert torch.equal(z, torch.tensor([3.5])), z
    print("ok", torchlight.__file__)
""")


def test_pip_install_into_a_venv_then_import_elsewhere(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-build-isolation", "--no-index",
                              str(REPO / "python")], capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stdout + install.stderr

    # Nothing from the checkout on the path, and a directory far from it.
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "TORCHLIGHT_BUILD_DIR", "TORCHLIGHT_SCHEMA", "TORCHLIGHT_PYTHON_EXT_DIR")}
    env["TORCHLIGHT_CACHE_DIR"] = str(tmp_path / "cache")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    script = elsewhere / "check.py"
    script.write_text(CHECK)
    result = subprocess.run([str(python), str(script), str(FIXTURES / "add.pte")], cwd=elsewhere, env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("ok " + str(venv)), result.stdout
