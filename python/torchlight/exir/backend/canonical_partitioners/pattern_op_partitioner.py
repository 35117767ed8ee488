"""executorch.exir.backend.canonical_partitioners.pattern_op_partitioner:
generate_pattern_op_partitions with an operator support check (the form
upstream's partitioner demos use), over torch's CapabilityBasedPartitioner,
which keeps every partition convex."""

from typing import List, Optional

import torch.fx
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner, Partition
from torch.fx.passes.operator_support import OperatorSupportBase


def generate_pattern_op_partitions(graph_module: torch.fx.GraphModule, patterns=None,
                                   partitions_list=None,
                                   op_support: Optional[OperatorSupportBase] = None,
                                   ignore_literals: bool = False) -> List[Partition]:
    """The largest convex groups of nodes `op_support` accepts. Matching
    `patterns` (graphs to find) and `partitions_list` are not supported."""
    if patterns or partitions_list:
        raise NotImplementedError("generate_pattern_op_partitions: only op_support is supported "
                                  "(patterns and partitions_list are not)")
    if op_support is None:
        raise ValueError("generate_pattern_op_partitions needs op_support")
    return CapabilityBasedPartitioner(graph_module, op_support,
                                      allows_single_node_partition=True).propose_partitions()


__all__ = ["generate_pattern_op_partitions"]
