"""executorch.exir.capture._config (upstream path of the config classes)."""

from torchlight.config import EdgeCompileConfig, ExecutorchBackendConfig

__all__ = ["EdgeCompileConfig", "ExecutorchBackendConfig"]
