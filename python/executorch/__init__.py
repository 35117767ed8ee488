"""Upstream ExecuTorch module paths mapped onto torchlight, so scripts
written for ExecuTorch import unchanged (only the entries listed below)."""
