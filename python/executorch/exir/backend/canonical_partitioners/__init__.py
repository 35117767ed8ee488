"""executorch.exir.backend.canonical_partitioners -> torchlight.exir.backend.canonical_partitioners (one implementation, two names)."""
