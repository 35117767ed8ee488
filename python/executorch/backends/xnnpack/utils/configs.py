"""executorch.backends.xnnpack.utils.configs -> torchlight.backends.xnnpack.utils.configs (one implementation, two names)."""

from torchlight.backends.xnnpack.utils.configs import *  # noqa: F401,F403
