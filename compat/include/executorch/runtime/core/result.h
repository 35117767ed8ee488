// Upstream path; see compat/README.md.
#pragma once

#include <executorch/runtime/core/error.h>

#include "runtime/core/result.h"

namespace executorch::runtime {
using ::torchlight::Result;
}  // namespace executorch::runtime
