"""executorch.exir.backend: delegation API (backend_details, partitioner,
compile_spec_schema, backend_api, utils), over torchlight.delegation."""
