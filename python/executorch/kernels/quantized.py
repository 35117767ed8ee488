"""executorch.kernels.quantized -> torchlight.kernels.quantized: importing it registers the quantized_decomposed out variants."""

from torchlight.kernels.quantized import *  # noqa: F401,F403
