"""executorch.exir.passes.memory_planning_pass (upstream path)."""

from torchlight.upstream_passes import MemoryPlanningPass

__all__ = ["MemoryPlanningPass"]
