"""executorch.exir.dialects._ops -> torchlight.exir.dialects._ops (one implementation, two names)."""

from torchlight.exir.dialects._ops import *  # noqa: F401,F403
