// Upstream path; see compat/README.md. EXECUTORCH_LIBRARY(ns, "op.out", f)
// registers the unboxed function f as the kernel of "ns::op.out" in the
// default registry (extension/kernel_util/linked_kernels.h).
#pragma once

#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/exec_aten/exec_aten.h>
#include <executorch/runtime/kernel/kernel_runtime_context.h>

#include "extension/kernel_util/linked_kernels.h"

#define EXECUTORCH_LIBRARY(ns, op_name, func) TL_REGISTER_KERNEL(ns, op_name, func)
