"""executorch.exir.pass_base -> torchlight.exir.pass_base (one implementation, two names)."""

from torchlight.exir.pass_base import *  # noqa: F401,F403
