"""executorch.devtools.bundled_program.schema -> torchlight.devtools.bundled_program.schema (one implementation, two names)."""

from torchlight.devtools.bundled_program.schema import *  # noqa: F401,F403
