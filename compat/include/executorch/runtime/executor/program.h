// Upstream path; see compat/README.md.
#pragma once

#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/result.h>

#include "runtime/executor/method.h"
#include "runtime/executor/method_meta.h"
#include "runtime/executor/program.h"

namespace executorch::runtime {
using ::torchlight::Method;
using ::torchlight::MethodMeta;
using ::torchlight::Program;
}  // namespace executorch::runtime
