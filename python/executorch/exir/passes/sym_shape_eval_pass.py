"""executorch.exir.passes.sym_shape_eval_pass -> torchlight.exir.passes.sym_shape_eval_pass (one implementation, two names)."""

from torchlight.exir.passes.sym_shape_eval_pass import *  # noqa: F401,F403
