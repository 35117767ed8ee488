// Prefill of the weight-only fused linears (int8, 4w): a call of
// kMinRowsDequantizedGemm rows or more dequantizes the weight a panel at a
// time and multiplies the float input on the fp32 GEMM (dequantized_gemm.h),
// with the scratch prepare sized from the input's planned rows.
#pragma once

#include <cstddef>
#include <cstdint>

#include "extension/threadpool/threadpool.h"
#include "kernels/quantized/dequantized_gemm.h"
#include "runtime/core/status.h"
#include "runtime/kernel/kernel_context.h"

namespace torchlight::quantized {

/// Prepare's scratch for a [N, K] weight and `planned_rows` rows: the
/// GEMM's when such a call takes it, else none.
inline size_t weight_only_gemm_scratch_bytes(int64_t planned_rows, int64_t k, int64_t n) {
  return planned_rows >= kMinRowsDequantizedGemm
             ? dequantized_gemm_scratch_bytes(k, n, 0, threadpool::num_threads())
             : 0;
}

/// Runs `problem` on the GEMM when it has enough rows and the call has the
/// scratch (setting *status to the GEMM's); false, doing nothing, otherwise
/// (the caller's loops run it).
inline bool run_weight_only_gemm(KernelContext& ctx, const DequantizedGemm& problem,
                                 Status* status) {
  DequantizedGemmScratch scratch;
  if (problem.rows < kMinRowsDequantizedGemm ||
      !carve_dequantized_gemm_scratch(ctx.scratch(), ctx.scratch_bytes(), problem.k, problem.n, 0,
                                      &scratch)) {
    return false;
  }
  *status = run_dequantized_gemm(problem, scratch);
  return true;
}

}  // namespace torchlight::quantized
