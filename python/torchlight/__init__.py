"""torchlight: export PyTorch models to .pte programs and run them.

Export (ExecuTorch's verbs):

    ep = torch.export.export(model, example_inputs, dynamic_shapes=...)
    edge = torchlight.to_edge(ep)                 # or {method_name: ep}
    edge = edge.to_backend(partitioner)           # optional delegation
    prog = edge.to_executorch(torchlight.ExecutorchBackendConfig())
    prog.save("model.pte")

Run (needs the runtime bindings built, see torchlight.runtime):

    module = torchlight.runtime.load("model.pte")
    outputs = module.run("forward", [x])
"""

import torchlight.kernels.quantized  # noqa: F401  (quantized_decomposed out variants)
from torchlight.config import EdgeCompileConfig, ExecutorchBackendConfig
from torchlight.delegation import (BackendDetails, CompileSpec, DelegationSpec,
                                   LoweredBackendModule, Partitioner, PartitionResult,
                                   PreprocessResult, register_backend)
from torchlight.errors import ExportError
from torchlight.kernel_check import MissingKernelsError
from torchlight.method_graph import MemorySummary
from torchlight.program_manager import (EdgeProgramManager, ExecutorchProgramManager, to_edge,
                                        to_edge_transform_and_lower)

__all__ = [
    "BackendDetails", "CompileSpec", "DelegationSpec", "EdgeCompileConfig", "EdgeProgramManager",
    "ExecutorchBackendConfig", "ExecutorchProgramManager", "ExportError", "LoweredBackendModule",
    "MemorySummary", "MissingKernelsError", "Partitioner", "PartitionResult", "PreprocessResult",
    "register_backend", "to_edge", "to_edge_transform_and_lower",
]
