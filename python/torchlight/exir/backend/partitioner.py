"""executorch.exir.backend.partitioner."""

from torchlight.delegation import DelegationSpec, Partitioner, PartitionResult

__all__ = ["DelegationSpec", "Partitioner", "PartitionResult"]
