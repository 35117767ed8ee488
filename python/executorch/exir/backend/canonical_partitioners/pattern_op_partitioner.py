"""executorch.exir.backend.canonical_partitioners.pattern_op_partitioner -> torchlight (one implementation, two names)."""

from torchlight.exir.backend.canonical_partitioners.pattern_op_partitioner import *  # noqa: F401,F403
