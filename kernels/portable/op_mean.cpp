// aten::mean.out and aten::mean.dtype_out: the mean over some dims or all.
//
// ATen semantics: the dtype (`dtype` when given, else self's) must be
// floating, even when out is ("could not infer output dtype"); out must have
// `dtype` when given and be floating in any case. `dim` None or [] means
// every dim. As ATen's CPU kernel, the sum is rounded to out's dtype (to
// float for float16/bfloat16) and then divided by the element count; an
// empty mean is NaN.
#include <type_traits>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/reduce.h"

namespace torchlight::portable {

namespace {

void mean_impl(KernelContext& ctx, const NamedTensor& self, Span<const int64_t> dims,
               bool reduce_all, bool keepdim, const EValue& dtype_arg, const NamedTensor& out) {
  bool has_dtype = false;
  ScalarType dtype = ScalarType::kFloat;
  TL_KERNEL_RETURN_IF_ERROR(ctx, read_optional_dtype(dtype_arg, "dtype", &has_dtype, &dtype));
  const ScalarType in_dtype = has_dtype ? dtype : self.tensor.scalar_type();
  TL_KERNEL_CHECK(ctx, is_floating_point(in_dtype), Error::kInvalidType,
                  "argument '%s' has dtype %s: the mean needs a floating dtype (pass 'dtype')",
                  has_dtype ? "dtype" : "self", to_string(in_dtype));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_out_matches_dtype(has_dtype, dtype, out));
  ReductionPlan plan;
  TL_KERNEL_RETURN_IF_ERROR(ctx, plan.init(self, dims, reduce_all, keepdim));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, plan.out_sizes()));
  TL_SWITCH_FLOAT_TYPES(out.tensor.scalar_type(), ctx, "out", OUT, [&] {
    using Acc = ReduceAcc<OUT>;
    // The sum is rounded to this type before the division.
    using SumType = std::conditional_t<kIsReducedFloat<OUT>, float, OUT>;
    TL_KERNEL_RETURN_IF_ERROR(
        ctx, apply_reduction<OUT>(
                 self, out, plan, Acc(0), [](Acc acc, Acc x) { return acc + x; },
                 [](Acc acc, int64_t count) {
                   return static_cast<SumType>(static_cast<SumType>(acc) /
                                               static_cast<SumType>(count));
                 }));
  });
}

}  // namespace

void mean_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 5, *args[4]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[4]->to_tensor(), "out"};
  Span<const int64_t> dims;
  if (!args[1]->is_none()) dims = args[1]->to_int_list();
  mean_impl(ctx, self, dims, dims.empty(), args[2]->to_bool(), *args[3], out);
}

void mean_dtype_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[2]->to_tensor(), "out"};
  mean_impl(ctx, self, {}, /*reduce_all=*/true, /*keepdim=*/false, *args[1], out);
}

}  // namespace torchlight::portable
