"""executorch.exir.backend.backend_details: upstream's BackendDetails.

    class MyBackend(BackendDetails):
        @staticmethod
        def preprocess(edge_program: ExportedProgram,
                       compile_specs: List[CompileSpec]) -> PreprocessResult: ...

A partitioner's DelegationSpec("MyBackend", ...) finds it by class name (a
backend registered with torchlight.register_backend under the same id takes
precedence). preprocess gets the partition as an ExportedProgram: the
constants the partitioner tagged (tag_constant_data) are its parameters,
buffers and constants; the partition's inputs are user inputs. The runtime
must have a backend registered under the same name.
"""

import abc
from typing import List

from torch.export import ExportedProgram

from torchlight import delegation
from torchlight.delegation import CompileSpec, PreprocessResult


class BackendDetails(delegation.BackendDetails):
    preprocess_takes_exported_program = True

    @staticmethod
    @abc.abstractmethod
    def preprocess(edge_program: ExportedProgram,
                   compile_specs: List[CompileSpec]) -> PreprocessResult:
        """Compiles one partition into the blob the runtime backend loads."""


__all__ = ["BackendDetails", "CompileSpec", "PreprocessResult"]
