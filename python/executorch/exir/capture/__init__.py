"""executorch.exir.capture -> torchlight.exir.capture (one implementation, two names)."""

from torchlight.exir.capture import *  # noqa: F401,F403
