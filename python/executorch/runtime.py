"""executorch.runtime -> torchlight.runtime (one implementation, two names)."""

from torchlight.runtime import *  # noqa: F401,F403
