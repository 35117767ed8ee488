"""executorch.devtools.etdump.schema_flatcc -> torchlight.devtools.etdump.schema_flatcc (one implementation, two names)."""

from torchlight.devtools.etdump.schema_flatcc import *  # noqa: F401,F403
