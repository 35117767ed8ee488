"""executorch.extension -> torchlight.extension (one implementation, two names)."""

from torchlight.extension import *  # noqa: F401,F403
