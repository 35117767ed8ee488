"""executorch.backends.xnnpack.partition.xnnpack_partitioner -> torchlight.backends.xnnpack.partition.xnnpack_partitioner (one implementation, two names)."""

from torchlight.backends.xnnpack.partition.xnnpack_partitioner import *  # noqa: F401,F403
