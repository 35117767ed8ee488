"""executorch.extension (upstream path): the Python runtime bindings."""
