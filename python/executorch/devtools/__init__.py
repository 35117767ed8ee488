"""executorch.devtools -> torchlight.devtools (one implementation, two names);
the submodules (bundled_program, backend_debug, etdump, ...) re-export theirs."""

from torchlight.devtools import *  # noqa: F401,F403
from torchlight.devtools import __getattr__  # noqa: F401  (the lazily loaded names)
