"""executorch.kernels -> torchlight.kernels."""
