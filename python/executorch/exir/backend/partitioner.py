"""executorch.exir.backend.partitioner -> torchlight.exir.backend.partitioner (one implementation, two names)."""

from torchlight.exir.backend.partitioner import *  # noqa: F401,F403
