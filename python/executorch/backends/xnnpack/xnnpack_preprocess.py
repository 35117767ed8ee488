"""executorch.backends.xnnpack.xnnpack_preprocess -> torchlight.backends.xnnpack.xnnpack_preprocess (one implementation, two names)."""

from torchlight.backends.xnnpack.xnnpack_preprocess import *  # noqa: F401,F403
