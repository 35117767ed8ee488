"""executorch.devtools.bundled_program.config -> torchlight.devtools.bundled_program.config (one implementation, two names)."""

from torchlight.devtools.bundled_program.config import *  # noqa: F401,F403
