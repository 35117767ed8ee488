"""executorch.extension.pybindings -> torchlight.extension.pybindings (one implementation, two names)."""

from torchlight.extension.pybindings import *  # noqa: F401,F403
