"""executorch.exir.dialects -> torchlight.exir.dialects (one implementation, two names)."""

from torchlight.exir.dialects import *  # noqa: F401,F403
