// aten::add.out, sub.out, mul.out, div.out for float32: the portable
// kernels' prepared fast path (kernels/portable/util/arith_fast_path.h: same
// operands, same arithmetic, same fallbacks to the reference kernel) with
// its element loop spread over the thread pool when the call is large
// (pool_split.h), as an LLM prefill's residual adds and SwiGLU products
// are. Element-wise, so the results are those of the portable kernels.
#include "kernels/optimized/optimized_ops.h"
#include "kernels/optimized/pool_split.h"
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/arith_fast_path.h"

namespace torchlight::optimized {

namespace fast = portable::arith_fast_path;

void add_out(KernelContext& ctx, Span<EValue*> args) { portable::add_out(ctx, args); }
void sub_out(KernelContext& ctx, Span<EValue*> args) { portable::sub_out(ctx, args); }
void mul_out(KernelContext& ctx, Span<EValue*> args) { portable::mul_out(ctx, args); }
void div_out(KernelContext& ctx, Span<EValue*> args) { portable::div_out(ctx, args); }

Status prepare_add(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return fast::prepare_arith<fast::kAddOut, add_out, PoolSplit>(args, call);
}
Status prepare_sub(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return fast::prepare_arith<fast::kSubOut, sub_out, PoolSplit>(args, call);
}
Status prepare_mul(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return fast::prepare_arith<fast::kMulOut, mul_out, PoolSplit>(args, call);
}
Status prepare_div(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return fast::prepare_arith<fast::kDivOut, div_out, PoolSplit>(args, call);
}

}  // namespace torchlight::optimized
