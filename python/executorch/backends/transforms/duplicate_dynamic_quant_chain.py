"""executorch.backends.transforms.duplicate_dynamic_quant_chain -> torchlight.backends.transforms.duplicate_dynamic_quant_chain (one implementation, two names)."""

from torchlight.backends.transforms.duplicate_dynamic_quant_chain import *  # noqa: F401,F403
from torchlight.backends.transforms.duplicate_dynamic_quant_chain import DuplicateDynamicQuantChainPass  # noqa: F401
