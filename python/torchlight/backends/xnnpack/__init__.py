"""XNNPACK delegate, ahead-of-time half: XnnpackPartitioner tags what
XNNPACK runs, XnnpackBackend.preprocess writes upstream's payload (XH00
header + XN01 flatbuffer + constants; shared/spec/xnnpack-format.md). The
runtime half is backends/xnnpack in C++ (registered as "XnnpackBackend")."""

from torchlight.backends.xnnpack.preprocess import BACKEND_ID, XnnpackBackend
from torchlight.backends.xnnpack.partitioner import (XnnpackDynamicallyQuantizedPartitioner,
                                                     XnnpackFloatingPointPartitioner,
                                                     XnnpackPartitioner,
                                                     XnnpackQuantizedPartitioner)

__all__ = ["BACKEND_ID", "XnnpackBackend", "XnnpackDynamicallyQuantizedPartitioner",
           "XnnpackFloatingPointPartitioner", "XnnpackPartitioner", "XnnpackQuantizedPartitioner"]
