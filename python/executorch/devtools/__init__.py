"""executorch.devtools -> torchlight.devtools (one implementation, two names)."""

from torchlight.devtools import *  # noqa: F401,F403
from torchlight.devtools import __getattr__  # noqa: F401  (the lazily loaded names)
