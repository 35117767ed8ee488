"""executorch.backends.transforms -> torchlight.backends.transforms."""
