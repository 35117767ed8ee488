"""executorch.exir.backend.backend_api -> torchlight.exir.backend.backend_api (one implementation, two names)."""

from torchlight.exir.backend.backend_api import *  # noqa: F401,F403
