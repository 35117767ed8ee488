"""executorch.devtools.etdump -> torchlight.devtools.etdump (one implementation, two names)."""

from torchlight.devtools.etdump import *  # noqa: F401,F403
