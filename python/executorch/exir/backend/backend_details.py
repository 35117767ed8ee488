"""executorch.exir.backend.backend_details -> torchlight.exir.backend.backend_details (one implementation, two names)."""

from torchlight.exir.backend.backend_details import *  # noqa: F401,F403
