"""executorch.exir.passes.memory_planning_pass -> torchlight.exir.passes.memory_planning_pass (one implementation, two names)."""

from torchlight.exir.passes.memory_planning_pass import *  # noqa: F401,F403
