"""executorch.devtools.etdump.serialize -> torchlight.devtools.etdump.serialize (one implementation, two names)."""

from torchlight.devtools.etdump.serialize import *  # noqa: F401,F403
