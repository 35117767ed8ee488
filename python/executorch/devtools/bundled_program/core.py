"""executorch.devtools.bundled_program.core -> torchlight.devtools.bundled_program.core (one implementation, two names)."""

from torchlight.devtools.bundled_program.core import *  # noqa: F401,F403
