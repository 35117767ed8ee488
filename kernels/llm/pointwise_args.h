// Checks shared by the fused pointwise kernels (op_silu.cpp, op_rms_norm.cpp,
// op_swiglu.cpp, op_add_rms_norm.cpp).
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

/// kInvalidArgument naming `weight` unless its first size is `dim` (an
/// RMSNorm's [D] weight, D the input's last size).
Status check_norm_weight(const portable::NamedTensor& weight, int64_t dim);

/// Rows of a [rows, dim] RMSNorm (or add + RMSNorm) per thread-pool chunk,
/// at least: 16384 elements, ~3 us of work (a stories15m prefill's 128 x 288
/// takes ~7.5 us on one core; at 32768 that prefill split 113 + 15 rows,
/// i.e. ran on one thread). At least one row.
int64_t norm_min_rows_per_chunk(int64_t dim);

/// kInvalidArgument naming `t` unless it has `like`'s sizes (`like` named
/// too: the operands of an element-wise kernel that does not broadcast).
Status check_same_sizes(const portable::NamedTensor& t, const portable::NamedTensor& like);

}  // namespace torchlight::llm
