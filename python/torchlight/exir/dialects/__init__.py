"""executorch.exir.dialects."""
