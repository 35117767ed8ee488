// The delegate backends Module's default form (and the CLI) offers to every
// program it loads.
#pragma once

#include "runtime/backend/backend_registry.h"

namespace torchlight {

/// A process-wide registry holding XnnpackBackend; built on first use.
const BackendRegistry* default_backends();

}  // namespace torchlight
