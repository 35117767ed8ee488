"""executorch.backends.xnnpack.utils.configs: the configs upstream's XNNPACK
examples pass to to_edge and to_executorch."""

from typing import List, Optional

from torchlight.config import EdgeCompileConfig, ExecutorchBackendConfig


def get_xnnpack_edge_compile_config(skip_dim_order: Optional[bool] = None) -> EdgeCompileConfig:
    """Upstream's: the IR validity check off (quantized graphs carry
    quantized_decomposed operators). `skip_dim_order` (later upstream
    releases) sets _skip_dim_order when given."""
    config = EdgeCompileConfig(_check_ir_validity=False)
    if skip_dim_order is not None:
        config._skip_dim_order = skip_dim_order
    return config


def get_xnnpack_executorch_backend_config(additional_passes: Optional[List] = None) \
        -> ExecutorchBackendConfig:
    return ExecutorchBackendConfig(passes=list(additional_passes or []),
                                   extract_delegate_segments=True)


__all__ = ["get_xnnpack_edge_compile_config", "get_xnnpack_executorch_backend_config"]
