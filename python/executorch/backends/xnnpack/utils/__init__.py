"""executorch.backends.xnnpack.utils -> torchlight.backends.xnnpack.utils (one implementation, two names)."""

from torchlight.backends.xnnpack.utils import *  # noqa: F401,F403
