"""executorch.devtools: upstream's devtools module paths (see the submodules)."""
