"""executorch.backends.xnnpack.partition.xnnpack_partitioner (upstream path)."""

from torchlight.backends.xnnpack.partitioner import (XnnpackDynamicallyQuantizedPartitioner,
                                                     XnnpackFloatingPointPartitioner,
                                                     XnnpackPartitioner,
                                                     XnnpackQuantizedPartitioner)

__all__ = ["XnnpackDynamicallyQuantizedPartitioner", "XnnpackFloatingPointPartitioner",
           "XnnpackPartitioner", "XnnpackQuantizedPartitioner"]
