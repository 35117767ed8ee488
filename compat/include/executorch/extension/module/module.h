// Upstream path; see compat/README.md.
#pragma once

#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/result.h>
#include <executorch/runtime/executor/program.h>

#include "extension/module/module.h"

namespace executorch::extension {
using ::torchlight::Module;
}  // namespace executorch::extension

// The names upstream's older examples use.
namespace torch::executor {
using ::torchlight::Error;
using ::torchlight::EValue;
using ::torchlight::Module;
using ::torchlight::Result;
}  // namespace torch::executor
