"""executorch.extension.pybindings.portable_lib -> torchlight.extension.pybindings.portable_lib (one implementation, two names)."""

from torchlight.extension.pybindings.portable_lib import *  # noqa: F401,F403
