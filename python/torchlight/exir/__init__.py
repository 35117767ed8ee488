"""Upstream ExecuTorch's `executorch.exir`, over torchlight's exporter:
scripts written for ExecuTorch import from here with `executorch` renamed to
`torchlight`. The objects are ours (torchlight.program_manager,
torchlight.config); see python/README.md for what still differs."""

from torch.export import ExportedProgram

from torchlight.config import EdgeCompileConfig, ExecutorchBackendConfig
from torchlight.program_manager import (EdgeProgramManager, ExecutorchProgramManager, to_edge,
                                        to_edge_transform_and_lower)

__all__ = ["EdgeCompileConfig", "EdgeProgramManager", "ExecutorchBackendConfig",
           "ExecutorchProgramManager", "ExportedProgram", "to_edge",
           "to_edge_transform_and_lower"]
