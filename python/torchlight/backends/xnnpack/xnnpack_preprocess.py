"""executorch.backends.xnnpack.xnnpack_preprocess (upstream path)."""

from torchlight.backends.xnnpack.preprocess import XnnpackBackend

__all__ = ["XnnpackBackend"]
