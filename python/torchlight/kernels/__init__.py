"""Kernel libraries as the exporter sees them (ExecuTorch's `executorch.kernels`).

    import torchlight.kernels.quantized   # registers quantized_decomposed::*.out
"""
