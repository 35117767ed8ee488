"""executorch.backends.xnnpack -> torchlight.backends.xnnpack."""

from torchlight.backends.xnnpack import (XnnpackBackend, XnnpackDynamicallyQuantizedPartitioner,
                                         XnnpackFloatingPointPartitioner, XnnpackPartitioner,
                                         XnnpackQuantizedPartitioner)

__all__ = ["XnnpackBackend", "XnnpackDynamicallyQuantizedPartitioner",
           "XnnpackFloatingPointPartitioner", "XnnpackPartitioner", "XnnpackQuantizedPartitioner"]
