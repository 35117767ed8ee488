// aten::amax.out and aten::amin.out: the largest / smallest element over
// some dims (dim=[] means all).
//
// ATen semantics: out has self's dtype (every real type, bool included);
// NaN wins (propagates); there is no identity, so reducing over a dim of
// size 0, or over all dims of an empty tensor, is an error.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/opmath.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/reduce.h"

namespace torchlight::portable {

namespace {

template <bool kMax>
void extremum_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const Span<const int64_t> dims = args[1]->to_int_list();
  const NamedTensor out{args[3]->to_tensor(), "out"};

  TL_KERNEL_RETURN_IF_ERROR(ctx, check_same_dtype(self, out));
  ReductionPlan plan;
  TL_KERNEL_RETURN_IF_ERROR(ctx, plan.init(self, dims, dims.empty(), args[2]->to_bool()));
  TL_KERNEL_CHECK(ctx, !(dims.empty() && self.tensor.numel() == 0), Error::kInvalidArgument,
                  "argument 'self' is empty and 'dim' is []: give the dims to reduce");
  const int64_t empty_dim = plan.first_empty_reduced_dim(self.tensor);
  TL_KERNEL_CHECK(ctx, empty_dim < 0, Error::kInvalidArgument,
                  "argument 'dim': dim %lld of 'self' has size 0 and there is no identity",
                  static_cast<long long>(empty_dim));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, plan.out_sizes()));

  TL_SWITCH_REAL_TYPES(self.tensor.scalar_type(), ctx, "self", CTYPE, [&] {
    using Compute = opmath_t<CTYPE>;
    const CTYPE* in = self.tensor.const_data_ptr<CTYPE>();
    CTYPE* result = out.tensor.mutable_data_ptr<CTYPE>();
    plan.for_each_output(self.tensor, out.tensor, [&](int64_t in_base, int64_t out_offset) {
      bool first = true;
      Compute best = Compute();
      plan.for_each_reduced(self.tensor, in_base, [&](int64_t offset) {
        const Compute x = convert<Compute>(in[offset]);
        // x != x: NaN; once best is NaN nothing replaces it.
        const bool better = kMax ? x > best : x < best;
        if (first || (best == best && (x != x || better))) best = x;
        first = false;
      });
      result[out_offset] = convert<CTYPE>(best);
    });
  });
}

}  // namespace

void amax_out(KernelContext& ctx, Span<EValue*> args) { extremum_out<true>(ctx, args); }

void amin_out(KernelContext& ctx, Span<EValue*> args) { extremum_out<false>(ctx, args); }

}  // namespace torchlight::portable
