// aten::argmax.out and aten::argmin.out: the index of the largest / smallest
// element along `dim`, or in the flattened tensor when `dim` is None.
//
// ATen semantics: out is int64; bool input is not supported; the first
// occurrence wins ties and the first NaN wins over everything; with dim None
// and keepdim the result has self's rank with every size 1. Reducing over a
// dim of size 0 (or all of an empty tensor) is an error.
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
void arg_extremum_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const bool all = args[1]->is_none();
  const int64_t dim = all ? 0 : args[1]->to_int();
  const NamedTensor out{args[3]->to_tensor(), "out"};

  TL_KERNEL_CHECK(ctx, out.tensor.scalar_type() == ScalarType::kLong, Error::kInvalidType,
                  "argument 'out' has dtype %s, expected int64",
                  to_string(out.tensor.scalar_type()));
  ReductionPlan plan;
  TL_KERNEL_RETURN_IF_ERROR(ctx, plan.init(self, {&dim, all ? 0u : 1u}, all, args[2]->to_bool()));
  TL_KERNEL_CHECK(ctx, !(all && self.tensor.numel() == 0), Error::kInvalidArgument,
                  "argument 'self' is empty and 'dim' is None: give the dim to reduce");
  const int64_t empty_dim = plan.first_empty_reduced_dim(self.tensor);
  TL_KERNEL_CHECK(ctx, empty_dim < 0, Error::kInvalidArgument,
                  "argument 'dim': dim %lld of 'self' has size 0",
                  static_cast<long long>(empty_dim));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, plan.out_sizes()));

  TL_SWITCH_REAL_TYPES_NO_BOOL(self.tensor.scalar_type(), ctx, "self", CTYPE, [&] {
    using Compute = opmath_t<CTYPE>;
    const CTYPE* in = self.tensor.const_data_ptr<CTYPE>();
    int64_t* result = out.tensor.mutable_data_ptr<int64_t>();
    plan.for_each_output(self.tensor, out.tensor, [&](int64_t in_base, int64_t out_offset) {
      int64_t index = 0;
      int64_t best_index = 0;
      Compute best = Compute();
      plan.for_each_reduced(self.tensor, in_base, [&](int64_t offset) {
        const Compute x = convert<Compute>(in[offset]);
        const bool better = kMax ? x > best : x < best;
        // Strict comparisons keep the first of equal values; the first NaN
        // is kept since nothing compares as better than NaN and best == best
        // fails.
        if (index == 0 || (best == best && (x != x || better))) {
          best = x;
          best_index = index;
        }
        ++index;
      });
      result[out_offset] = best_index;
    });
  });
}

}  // namespace

void argmax_out(KernelContext& ctx, Span<EValue*> args) { arg_extremum_out<true>(ctx, args); }

void argmin_out(KernelContext& ctx, Span<EValue*> args) { arg_extremum_out<false>(ctx, args); }

}  // namespace torchlight::portable
