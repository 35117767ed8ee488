"""executorch.exir.passes -> torchlight.exir.passes (one implementation, two names)."""

from torchlight.exir.passes import *  # noqa: F401,F403
