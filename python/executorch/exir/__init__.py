"""executorch.exir -> torchlight.exir (one implementation, two names)."""

from torchlight.exir import *  # noqa: F401,F403
