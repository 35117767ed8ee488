"""Upstream ExecuTorch's module paths as a second name for torchlight's: each
module here re-exports torchlight.<same path> (for example executorch.exir is
torchlight.exir's names), so a script written for ExecuTorch runs with either
import. python/README.md lists the paths and what still differs."""
