"""Kernel libraries as the exporter sees them (ExecuTorch's `executorch.kernels`).

    import torchlight.kernels.quantized   # registers quantized_decomposed::*.out
    import torchlight.kernels.fused_quantized   # torchlight::linear_int8 / linear_4w / linear_qs8 (fused linears)
"""
