"""executorch.backends.xnnpack.partition.config -> torchlight.backends.xnnpack.partition.config (one implementation, two names)."""

from torchlight.backends.xnnpack.partition.config import *  # noqa: F401,F403
