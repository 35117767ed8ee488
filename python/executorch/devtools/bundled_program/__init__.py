"""executorch.devtools.bundled_program -> torchlight.devtools.bundled_program."""
