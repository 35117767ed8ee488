"""executorch.devtools.backend_debug -> torchlight.devtools.backend_debug (one implementation, two names)."""

from torchlight.devtools.backend_debug import *  # noqa: F401,F403
