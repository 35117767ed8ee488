"""executorch.exir.passes.sym_shape_eval_pass (upstream path)."""

from torchlight.upstream_passes import ConstraintBasedSymShapeEvalPass, HintBasedSymShapeEvalPass

__all__ = ["ConstraintBasedSymShapeEvalPass", "HintBasedSymShapeEvalPass"]
