"""executorch.exir.capture._config -> torchlight.exir.capture._config (one implementation, two names)."""

from torchlight.exir.capture._config import *  # noqa: F401,F403
