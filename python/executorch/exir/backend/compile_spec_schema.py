"""executorch.exir.backend.compile_spec_schema -> torchlight.exir.backend.compile_spec_schema (one implementation, two names)."""

from torchlight.exir.backend.compile_spec_schema import *  # noqa: F401,F403
