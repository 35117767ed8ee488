// Upstream path; see compat/README.md. WRAP_TO_ATEN(f, N) over
// extension/aten_util/aten_functor.h (N: the out tensor's position among the
// ATen function's parameters).
#pragma once

#include <executorch/runtime/core/exec_aten/exec_aten.h>
#include <executorch/runtime/kernel/kernel_runtime_context.h>

#include "extension/aten_util/aten_functor.h"

#define WRAP_TO_ATEN(...) TL_WRAP_TO_ATEN(__VA_ARGS__)
