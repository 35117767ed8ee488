"""executorch.exir.backend.compile_spec_schema."""

from torchlight.delegation import CompileSpec

__all__ = ["CompileSpec"]
