"""executorch.backends -> torchlight.backends (one implementation, two names)."""

from torchlight.backends import *  # noqa: F401,F403
