"""executorch.devtools.etrecord -> torchlight.devtools.etrecord (one implementation, two names)."""

from torchlight.devtools.etrecord import *  # noqa: F401,F403
