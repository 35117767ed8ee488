"""executorch.exir.backend.utils -> torchlight.exir.backend.utils (one implementation, two names)."""

from torchlight.exir.backend.utils import *  # noqa: F401,F403
