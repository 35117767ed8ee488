"""executorch.exir.passes: the pass objects ExecutorchBackendConfig takes."""

from torchlight.upstream_passes import MemoryPlanningPass, ToOutVarPass

__all__ = ["MemoryPlanningPass", "ToOutVarPass"]
