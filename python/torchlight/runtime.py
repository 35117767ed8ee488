"""Run .pte programs from Python with the C++ runtime.

    module = torchlight.runtime.load("model.pte")     # or the file's bytes
    y, = module.run("forward", [x])                     # torch tensors or numpy arrays
    module.method_meta("forward")["inputs"][0]["tensor"]["sizes"]

The native module (_torchlight_runtime, python/bindings/) is built by CMake
into build/<cfg>/python. It is looked up in $TORCHLIGHT_PYTHON_EXT_DIR, then
$TORCHLIGHT_BUILD_DIR/python, then build/release/python and
build/debug/python of this checkout, then the package's own _native/ (where
an installed package keeps it; python/setup.py).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np
import torch

from torchlight import ops
from torchlight.kernel_check import build_dirs

_EXTENSION = "_torchlight_runtime"
_extension_module = None


class RuntimeNotBuiltError(ImportError):
    """The native runtime module was not found in any build directory."""


def extension_dirs() -> List[Path]:
    dirs = []
    env = os.environ.get("TORCHLIGHT_PYTHON_EXT_DIR")
    if env:
        dirs.append(Path(env))
    return dirs + [d / "python" for d in build_dirs()] + [Path(__file__).resolve().parent / "_native"]


def extension():
    """The native module, imported on first use. Raises RuntimeNotBuiltError."""
    global _extension_module
    if _extension_module is not None:
        return _extension_module
    for directory in extension_dirs():
        for candidate in sorted(directory.glob(f"{_EXTENSION}*.so")):
            spec = importlib.util.spec_from_file_location(_EXTENSION, candidate)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            sys.modules[_EXTENSION] = module
            _extension_module = module
            return module
    searched = ", ".join(str(d) for d in extension_dirs())
    raise RuntimeNotBuiltError(f"the torchlight runtime module ({_EXTENSION}) was not found in "
                               f"{searched}; build it with `./torchlight build release` or set "
                               f"TORCHLIGHT_BUILD_DIR")


def is_available() -> bool:
    try:
        extension()
        return True
    except RuntimeNotBuiltError:
        return False


def registered_kernels() -> List[str]:
    return sorted(set(extension().registered_kernels()))


def registered_backends() -> List[str]:
    return list(extension().registered_backends())


_NUMPY_TO_TORCH = {np.dtype(np.float16): torch.float16, np.dtype(np.float32): torch.float32,
                   np.dtype(np.float64): torch.float64, np.dtype(np.int8): torch.int8,
                   np.dtype(np.int16): torch.int16, np.dtype(np.int32): torch.int32,
                   np.dtype(np.int64): torch.int64, np.dtype(np.uint8): torch.uint8,
                   np.dtype(np.uint16): torch.uint16, np.dtype(np.uint32): torch.uint32,
                   np.dtype(np.uint64): torch.uint64, np.dtype(np.bool_): torch.bool}


def _to_native(value: Any):
    if isinstance(value, np.ndarray):
        value = torch.from_numpy(np.ascontiguousarray(value))
    if isinstance(value, torch.Tensor):
        t = value.detach().cpu().contiguous()
        code = int(ops.scalar_type(t.dtype))
        raw = t.reshape(-1).view(torch.uint8) if t.numel() else torch.empty(0, dtype=torch.uint8)
        return (raw.numpy(), code, list(t.shape))
    if isinstance(value, (bool, int, float)):
        return value
    raise TypeError(f"inputs must be tensors, numpy arrays, bools, ints or floats, "
                    f"got {type(value).__name__}")


def _from_native(value: Any, as_numpy: bool):
    if isinstance(value, tuple) and len(value) == 3 and isinstance(value[0], bytearray):
        raw, code, sizes = value
        dtype = ops.torch_dtype(code)
        t = torch.frombuffer(raw, dtype=torch.uint8) if raw else torch.empty(0, dtype=torch.uint8)
        t = t.view(dtype).reshape(sizes)
        if as_numpy and dtype != torch.bfloat16:
            return t.numpy()
        return t
    if isinstance(value, list):
        return [_from_native(v, as_numpy) for v in value]
    return value


class Module:
    """A loaded .pte program. Methods load on first use and keep their
    planned memory between runs, so mutable buffers (e.g. a KV cache)
    persist from one run to the next."""

    def __init__(self, program: Union[str, os.PathLike, bytes], mmap: bool = True,
                 etdump_path: Optional[Union[str, os.PathLike]] = None,
                 debug_buffer_size: int = 0, etdump_events: int = 100000,
                 debug_buffer_path: Optional[Union[str, os.PathLike]] = None):
        """With `etdump_path`, an ETDump tracer records the method loads and
        every run (upstream's .etdp format, for torchlight.devtools.Inspector
        or upstream's); the file is rewritten after each run. It keeps up to
        `etdump_events` events. `debug_buffer_size` > 0 also captures every
        intermediate output and the program outputs into a buffer of that
        many bytes, written to `debug_buffer_path` (default: the etdump path
        plus ".debug")."""
        if etdump_path is None and (debug_buffer_size or debug_buffer_path is not None):
            raise ValueError("debug_buffer_size and debug_buffer_path need an etdump_path")
        if etdump_path is not None and etdump_events <= 0:
            raise ValueError(f"etdump_events must be positive, got {etdump_events}")
        if debug_buffer_size < 0:
            raise ValueError(f"debug_buffer_size must not be negative, got {debug_buffer_size}")
        self.etdump_path = None if etdump_path is None else str(etdump_path)
        self.debug_buffer_path = None
        if self.etdump_path is not None and debug_buffer_size > 0:
            self.debug_buffer_path = str(debug_buffer_path or self.etdump_path + ".debug")
        self._tempdir = None
        if isinstance(program, (bytes, bytearray)):
            self._tempdir = tempfile.TemporaryDirectory(prefix="torchlight-")
            path = Path(self._tempdir.name) / "program.pte"
            path.write_bytes(program)
            program = path
        self.path = str(program)
        self._native = extension().Module(self.path, mmap,
                                          etdump_events if etdump_path is not None else 0,
                                          debug_buffer_size)

    def method_names(self) -> List[str]:
        return list(self._native.method_names())

    def method_meta(self, method: str = "forward") -> Dict[str, Any]:
        """Inputs and outputs (tag; for tensors dtype code, sizes, dim order,
        dynamism, planned or not, bytes), planned arena sizes, operators,
        backends, value and instruction counts."""
        return self._native.method_meta(method)

    def load_method(self, method: str = "forward") -> None:
        self._native.load_method(method)

    def run(self, method: str, inputs: Sequence[Any] = (),
            as_numpy: Optional[bool] = None) -> List[Any]:
        """Runs `method` on `inputs` and returns its outputs (copies).
        Tensor outputs are numpy arrays when every tensor input was one (or
        `as_numpy`), else torch tensors. Raises _torchlight_runtime.Error (a
        RuntimeError whose message starts with the error code)."""
        if as_numpy is None:
            tensors = [v for v in inputs if isinstance(v, (np.ndarray, torch.Tensor))]
            as_numpy = bool(tensors) and all(isinstance(v, np.ndarray) for v in tensors)
        native_inputs = [_to_native(v) for v in inputs]
        outputs = self._native.execute(method, native_inputs)
        if self.etdump_path is not None:
            self.write_etdump()
        return [_from_native(v, as_numpy) for v in outputs]

    def write_etdump(self) -> Dict[str, int]:
        """Writes the trace so far to etdump_path (and the debug buffer).
        Raises RuntimeError when events or debug values were dropped (the
        files are still written); returns the counts otherwise."""
        if self.etdump_path is None:
            raise RuntimeError("this Module was made without an etdump_path")
        recorded, dropped, debug_dropped, debug_needed = self._native.write_etdump(
            self.etdump_path, self.debug_buffer_path or "")
        if dropped:
            raise RuntimeError(f"etdump: {dropped} events were dropped; make the Module with "
                               f"etdump_events > {recorded + dropped}")
        if debug_dropped:
            raise RuntimeError(f"etdump: the debug buffer is too small: {debug_dropped} values "
                               f"were not captured; it needs {debug_needed} bytes")
        return {"records": recorded, "debug_bytes_needed": debug_needed}

    def forward(self, *inputs: Any) -> List[Any]:
        return self.run("forward", inputs)

    def planned_bytes(self, method: str = "forward") -> int:
        return self._native.planned_bytes(method)


def load(program: Union[str, os.PathLike, bytes], mmap: bool = True, **etdump: Any) -> Module:
    """A Module; `etdump` takes Module's etdump_path, debug_buffer_size,
    etdump_events and debug_buffer_path."""
    return Module(program, mmap, **etdump)


# Upstream's API (executorch.runtime), over Module.
from torchlight.upstream_runtime import (BackendRegistry, Method, MethodMeta,  # noqa: E402
                                         OperatorRegistry, Program, Runtime, TensorInfo,
                                         Verification)
