// Upstream path; see compat/README.md.
#pragma once

#include "runtime/core/error.h"
#include "runtime/core/status.h"

namespace executorch::runtime {
using ::torchlight::Error;
using ::torchlight::Status;
}  // namespace executorch::runtime
