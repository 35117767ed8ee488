"""executorch.backends.xnnpack -> torchlight.backends.xnnpack (one implementation, two names)."""

from torchlight.backends.xnnpack import *  # noqa: F401,F403
