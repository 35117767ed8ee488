"""The portable kernels' conformance harness (see README.md)."""
