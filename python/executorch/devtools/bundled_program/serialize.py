"""executorch.devtools.bundled_program.serialize -> torchlight.devtools.bundled_program.serialize (one implementation, two names)."""

from torchlight.devtools.bundled_program.serialize import *  # noqa: F401,F403
