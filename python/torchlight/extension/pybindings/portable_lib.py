"""executorch.extension.pybindings.portable_lib: upstream's pybindings names
over torchlight.runtime (the kernels and backends are those of the build).

    m = _load_for_executorch("model.pte")
    outputs = m.forward((x,))
"""

from typing import List, Union
import os

from torchlight import runtime as _runtime
from torchlight.upstream_runtime import (ExecuTorchModule, MethodMeta, TensorInfo, Verification,
                                         load_for_executorch, load_for_executorch_from_buffer)


def _load_for_executorch(path: Union[str, os.PathLike], enable_etdump: bool = False,
                         debug_buffer_size: int = 0,
                         program_verification: Verification = Verification.InternalConsistency) \
        -> ExecuTorchModule:
    return load_for_executorch(path)


def _load_for_executorch_from_buffer(
        buffer: bytes, enable_etdump: bool = False, debug_buffer_size: int = 0,
        program_verification: Verification = Verification.InternalConsistency) \
        -> ExecuTorchModule:
    return load_for_executorch_from_buffer(buffer)


def _get_operator_names() -> List[str]:
    return _runtime.registered_kernels()


def _get_registered_backend_names() -> List[str]:
    return _runtime.registered_backends()


def _is_available(backend_name: str) -> bool:
    return backend_name in _runtime.registered_backends()


__all__ = ["ExecuTorchModule", "MethodMeta", "TensorInfo", "Verification",
           "_get_operator_names", "_get_registered_backend_names", "_is_available",
           "_load_for_executorch", "_load_for_executorch_from_buffer"]
