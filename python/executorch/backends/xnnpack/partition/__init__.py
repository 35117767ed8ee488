"""executorch.backends.xnnpack.partition -> torchlight.backends.xnnpack.partition (one implementation, two names)."""

from torchlight.backends.xnnpack.partition import *  # noqa: F401,F403
