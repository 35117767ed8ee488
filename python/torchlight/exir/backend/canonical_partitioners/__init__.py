"""executorch.exir.backend.canonical_partitioners (upstream path)."""
