// Checks shared by the fused pointwise kernels (op_silu.cpp, op_rms_norm.cpp).
#pragma once

#include "kernels/portable/util/kernel_args.h"
#include "runtime/core/status.h"

namespace torchlight::llm {

/// kInvalidType naming `t` unless it is float32.
Status check_float32(const portable::NamedTensor& t);

/// kInvalidArgument naming `t` unless its elements lie in row-major order
/// without gaps (strides of a contiguous tensor; dimensions of size 1 are
/// free), as the loops read them.
Status check_dense(const portable::NamedTensor& t);

}  // namespace torchlight::llm
