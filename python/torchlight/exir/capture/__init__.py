"""executorch.exir.capture (upstream path of the config classes)."""

from torchlight.config import EdgeCompileConfig, ExecutorchBackendConfig

__all__ = ["EdgeCompileConfig", "ExecutorchBackendConfig"]
