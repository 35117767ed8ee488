"""Upstream ExecuTorch's Python runtime API over torchlight.runtime.Module.

    from torchlight.runtime import Runtime
    program = Runtime.get().load_program("model.pte")     # a path, bytes or a file object
    method = program.load_method("forward")
    outputs = method.execute([x])                          # a list of torch tensors

and the older pybindings (torchlight.extension.pybindings.portable_lib):

    module = _load_for_executorch("model.pte")            # or _from_buffer(bytes)
    outputs = module.forward((x,))                         # or run_method("forward", (x,))

Outputs are always torch tensors (copies), as upstream returns them.
`verification`, `enable_etdump` and `debug_buffer_size` are accepted; our
loader always checks the whole program (upstream's InternalConsistency), and
event tracing lives in the C++ Module.
"""

from __future__ import annotations

import enum
import functools
import os
from pathlib import Path
from typing import Any, BinaryIO, Dict, List, Optional, Sequence, Set, Union

import torch

from torchlight import runtime as _runtime


class Verification(enum.IntEnum):
    Minimal = 0
    InternalConsistency = 1


class TensorInfo:
    """One tensor input or output of a method (upstream's TensorInfo)."""

    def __init__(self, info: Dict[str, Any]):
        self._info = info

    def sizes(self) -> List[int]:
        return list(self._info["sizes"])

    def dtype(self) -> int:
        """The ScalarType code (upstream returns the same integer)."""
        return int(self._info["scalar_type"])

    def is_memory_planned(self) -> bool:
        return bool(self._info["memory_planned"])

    def nbytes(self) -> int:
        return int(self._info["nbytes"])

    def __repr__(self) -> str:
        return (f"TensorInfo(sizes={self.sizes()}, dtype={self.dtype()}, "
                f"is_memory_planned={self.is_memory_planned()}, nbytes={self.nbytes()})")


class MethodMeta:
    """A method's inputs, outputs and planned buffers (upstream's MethodMeta)."""

    def __init__(self, meta: Dict[str, Any]):
        self._meta = meta

    def name(self) -> str:
        return self._meta["name"]

    def num_inputs(self) -> int:
        return len(self._meta["inputs"])

    def num_outputs(self) -> int:
        return len(self._meta["outputs"])

    def _tensor(self, kind: str, index: int) -> TensorInfo:
        items = self._meta[kind]
        if not 0 <= index < len(items):
            raise IndexError(f"method '{self.name()}' has {len(items)} {kind}, asked for "
                             f"{kind[:-1]} {index}")
        if "tensor" not in items[index]:
            raise ValueError(f"{kind[:-1]} {index} of method '{self.name()}' is a "
                             f"{items[index]['tag']}, not a tensor")
        return TensorInfo(items[index]["tensor"])

    def input_tensor_meta(self, index: int) -> TensorInfo:
        return self._tensor("inputs", index)

    def output_tensor_meta(self, index: int) -> TensorInfo:
        return self._tensor("outputs", index)

    def num_memory_planned_buffers(self) -> int:
        return len(self._meta["planned_buffer_sizes"])

    def memory_planned_buffer_size(self, index: int) -> int:
        return int(self._meta["planned_buffer_sizes"][index])

    def num_backends(self) -> int:
        return len(self._meta["backends"])

    def uses_backend(self, name: str) -> bool:
        return name in self._meta["backends"]

    def __repr__(self) -> str:
        return (f"MethodMeta(name={self.name()!r}, num_inputs={self.num_inputs()}, "
                f"num_outputs={self.num_outputs()}, "
                f"planned_buffer_sizes={self._meta['planned_buffer_sizes']})")


def _check_inputs(inputs: Sequence[Any]) -> List[Any]:
    if isinstance(inputs, (torch.Tensor, str, bytes)) or not isinstance(inputs, Sequence):
        raise TypeError(f"inputs must be a sequence (list or tuple) of values, got "
                        f"{type(inputs).__name__}")
    return list(inputs)


class Method:
    """A loaded method (upstream's executorch.runtime.Method)."""

    def __init__(self, module: _runtime.Module, name: str):
        self._module = module
        self._name = name
        module.load_method(name)

    def execute(self, inputs: Sequence[Any]) -> List[Any]:
        return self._module.run(self._name, _check_inputs(inputs), as_numpy=False)

    def __call__(self, inputs: Sequence[Any]) -> List[Any]:
        return self.execute(inputs)

    @property
    def metadata(self) -> MethodMeta:
        return MethodMeta(self._module.method_meta(self._name))


class Program:
    """A loaded program (upstream's executorch.runtime.Program)."""

    def __init__(self, module: _runtime.Module):
        self._module = module
        self._methods: Dict[str, Optional[Method]] = {n: None for n in module.method_names()}

    @property
    def method_names(self) -> Set[str]:
        return set(self._methods)

    def load_method(self, name: str) -> Method:
        if name not in self._methods:
            known = ", ".join(sorted(self._methods)) or "none"
            raise KeyError(f"the program has no method '{name}' (methods: {known})")
        if self._methods[name] is None:
            self._methods[name] = Method(self._module, name)
        return self._methods[name]

    def metadata(self, method_name: str) -> MethodMeta:
        return MethodMeta(self._module.method_meta(method_name))


class BackendRegistry:
    @property
    def registered_backend_names(self) -> List[str]:
        return _runtime.registered_backends()

    def is_available(self, backend_name: str) -> bool:
        return backend_name in _runtime.registered_backends()


class OperatorRegistry:
    @property
    def operator_names(self) -> Set[str]:
        return set(_runtime.registered_kernels())


def _program_bytes_or_path(data: Any) -> Union[str, bytes]:
    if isinstance(data, (str, os.PathLike)):
        return os.fspath(data)
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    if hasattr(data, "read"):
        return data.read()
    raise TypeError(f"expected a path to a .pte file, bytes, or a file object, got "
                    f"{type(data).__name__}")


class Runtime:
    """The runtime (upstream's executorch.runtime.Runtime): Runtime.get()."""

    @staticmethod
    @functools.lru_cache(maxsize=1)
    def get() -> "Runtime":
        _runtime.extension()  # Fails here, naming the build, if it is missing.
        return Runtime()

    def __init__(self):
        self.backend_registry = BackendRegistry()
        self.operator_registry = OperatorRegistry()

    def load_program(self, data: Union[bytes, bytearray, BinaryIO, Path, str], *,
                     verification: Verification = Verification.InternalConsistency,
                     enable_etdump: bool = False, debug_buffer_size: int = 0) -> Program:
        return Program(_runtime.Module(_program_bytes_or_path(data)))


class ExecuTorchModule:
    """The pybindings module object (_load_for_executorch's result)."""

    def __init__(self, module: _runtime.Module):
        self._module = module

    def run_method(self, method_name: str, inputs: Sequence[Any],
                   clone_outputs: bool = True) -> List[Any]:
        return self._module.run(method_name, _check_inputs(inputs), as_numpy=False)

    def forward(self, inputs: Sequence[Any], clone_outputs: bool = True) -> List[Any]:
        return self.run_method("forward", inputs, clone_outputs)

    def __call__(self, inputs: Sequence[Any], clone_outputs: bool = True) -> List[Any]:
        return self.forward(inputs, clone_outputs)

    def load_method(self, method_name: str) -> None:
        self._module.load_method(method_name)

    def method_names(self) -> List[str]:
        return self._module.method_names()

    def method_meta(self, method_name: str) -> MethodMeta:
        return MethodMeta(self._module.method_meta(method_name))


def load_for_executorch(path: Union[str, os.PathLike]) -> ExecuTorchModule:
    return ExecuTorchModule(_runtime.Module(os.fspath(path)))


def load_for_executorch_from_buffer(buffer: Union[bytes, bytearray, memoryview]) \
        -> ExecuTorchModule:
    if not isinstance(buffer, (bytes, bytearray, memoryview)):
        raise TypeError(f"_load_for_executorch_from_buffer takes bytes, got "
                        f"{type(buffer).__name__}")
    return ExecuTorchModule(_runtime.Module(bytes(buffer)))
