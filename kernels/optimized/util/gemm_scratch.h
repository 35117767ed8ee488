// How the optimized matmul kernels get gemm's packing memory: prepare asks
// for one workspace slot per thread of the pool as method scratch; eval
// hands that scratch to gemm. So nothing is allocated while a method runs.
#pragma once

#include "extension/threadpool/threadpool.h"
#include "kernels/optimized/gemm/gemm.h"
#include "runtime/kernel/kernel.h"

namespace torchlight::optimized {

inline Status prepare_gemm_scratch(PrepareContext&, Span<EValue*>, PreparedCall* call) {
  call->scratch_bytes = gemm_workspace_bytes(threadpool::num_threads());
  return Error::kOk;
}

inline GemmWorkspace gemm_workspace(const KernelContext& ctx) {
  return make_gemm_workspace(ctx.scratch(), ctx.scratch_bytes());
}

}  // namespace torchlight::optimized
