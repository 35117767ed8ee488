"""executorch.backends.xnnpack.partition.config.xnnpack_config -> torchlight.backends.xnnpack.partition.config.xnnpack_config (one implementation, two names)."""

from torchlight.backends.xnnpack.partition.config.xnnpack_config import *  # noqa: F401,F403
