"""executorch.devtools.inspector -> torchlight.devtools.inspector (one implementation, two names)."""

from torchlight.devtools.inspector import *  # noqa: F401,F403
