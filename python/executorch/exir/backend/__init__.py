"""executorch.exir.backend -> torchlight.exir.backend (one implementation, two names)."""

from torchlight.exir.backend import *  # noqa: F401,F403
