// Upstream path; see compat/README.md.
#pragma once

#include <executorch/runtime/core/exec_aten/exec_aten.h>

#include "runtime/core/evalue.h"

namespace executorch::runtime {
using ::torchlight::EValue;
}  // namespace executorch::runtime
