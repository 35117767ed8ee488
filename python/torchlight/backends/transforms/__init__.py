"""Graph transforms shared by backends (upstream's executorch.backends.transforms)."""
