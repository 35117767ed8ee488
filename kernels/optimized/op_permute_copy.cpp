// aten::permute_copy.out for float32: the portable kernel's prepared
// gather (kernels/portable/util/permute_copy_prepare.h: same checks, same
// fallbacks) with its runs spread over the thread pool when the copy is
// large (pool_split.h), as an LLM prefill's attention transposes are.
// Bytes are moved unchanged, so the results are the portable kernel's.
#include "kernels/optimized/optimized_ops.h"
#include "kernels/optimized/pool_split.h"
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/permute_copy_prepare.h"

namespace torchlight::optimized {

void permute_copy_out(KernelContext& ctx, Span<EValue*> args) {
  portable::permute_copy_out(ctx, args);
}

Status prepare_permute_copy(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return portable::permute_copy::prepare<&permute_copy_out, PoolSplit>(args, call);
}

}  // namespace torchlight::optimized
