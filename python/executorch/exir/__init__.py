"""executorch.exir -> torchlight's export verbs (the entries upstream's
XNNPACK examples use)."""

from torchlight import (EdgeCompileConfig, EdgeProgramManager, ExecutorchBackendConfig,
                        ExecutorchProgramManager, to_edge, to_edge_transform_and_lower)

__all__ = ["EdgeCompileConfig", "EdgeProgramManager", "ExecutorchBackendConfig",
           "ExecutorchProgramManager", "to_edge", "to_edge_transform_and_lower"]
