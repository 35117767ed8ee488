// aten::mean.out and aten::mean.dtype_out: the mean over some dims or all.
//
// ATen semantics: the dtype (`dtype` when given, else self's) must be
// floating, even when out is ("could not infer output dtype"); out must have
// `dtype` when given and be floating in any case. `dim` None or [] means
// every dim. As ATen's CPU kernel, the sum is rounded to out's dtype (to
// float for float16/bfloat16) and then divided by the element count; an
// empty mean is NaN.
//
// The prepare step checks all of that but the shapes at load and, for dense
// tensors with a float32/float64 out, installs a loop over the reduced
// dims (util/dense_reduce.h) that adds in the same order.
#include <type_traits>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dense_reduce.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/reduce.h"

namespace torchlight::portable {

namespace {

// The checks that need no data: dims, the dtype rules, out's dtype.
Status check_mean(const NamedTensor& self, Span<const int64_t> dims, bool reduce_all,
                  bool keepdim, const EValue& dtype_arg, const NamedTensor& out,
                  ReductionPlan* plan) {
  bool has_dtype = false;
  ScalarType dtype = ScalarType::kFloat;
  TL_RETURN_IF_ERROR(read_optional_dtype(dtype_arg, "dtype", &has_dtype, &dtype));
  const ScalarType in_dtype = has_dtype ? dtype : self.tensor.scalar_type();
  TL_CHECK_OR_RETURN(is_floating_point(in_dtype), Error::kInvalidType,
                     "argument '%s' has dtype %s: the mean needs a floating dtype (pass 'dtype')",
                     has_dtype ? "dtype" : "self", to_string(in_dtype));
  TL_RETURN_IF_ERROR(check_out_matches_dtype(has_dtype, dtype, out));
  TL_RETURN_IF_ERROR(plan->init(self, dims, reduce_all, keepdim));
  if (!visit_float_type(out.tensor.scalar_type(), [](auto) {})) {
    return unsupported_dtype("out", out.tensor.scalar_type(), kFloatTypeNames);
  }
  return check_real_dtype(self);
}

void mean_impl(KernelContext& ctx, const NamedTensor& self, Span<const int64_t> dims,
               bool reduce_all, bool keepdim, const EValue& dtype_arg, const NamedTensor& out) {
  ReductionPlan plan;
  TL_KERNEL_RETURN_IF_ERROR(ctx,
                            check_mean(self, dims, reduce_all, keepdim, dtype_arg, out, &plan));
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

Span<const int64_t> optional_dims(const EValue& dim) {
  return dim.is_none() ? Span<const int64_t>() : dim.to_int_list();
}

// As mean_impl: the sum in double, rounded to OUT (float for
// float16/bfloat16), divided in that type, then stored as OUT.
template <typename IN, typename OUT>
struct MeanOp {
  using Acc = ReduceAcc<OUT>;
  using SumType = std::conditional_t<kIsReducedFloat<OUT>, float, OUT>;
  Acc start() const { return Acc(0); }
  void step(Acc& acc, IN x, int64_t) const {
    acc = acc + static_cast<Acc>(convert<opmath_t<OUT>>(convert<OUT>(x)));
  }
  OUT finish(Acc acc, int64_t count) const {
    return convert<OUT>(
        static_cast<SumType>(static_cast<SumType>(acc) / static_cast<SumType>(count)));
  }
};

constexpr dense_reduce::Form kDimForm{dense_reduce::DimsKind::kList, 1, 2, 4};
constexpr dense_reduce::Form kAllForm{dense_reduce::DimsKind::kAll, 0, dense_reduce::kNoKeepdim,
                                      2};

}  // namespace

void mean_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 5, *args[4]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[4]->to_tensor(), "out"};
  const Span<const int64_t> dims = optional_dims(*args[1]);
  mean_impl(ctx, self, dims, dims.empty(), args[2]->to_bool(), *args[3], out);
}

void mean_dtype_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[2]->to_tensor(), "out"};
  mean_impl(ctx, self, {}, /*reduce_all=*/true, /*keepdim=*/false, *args[1], out);
}

Status mean_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[4]->to_tensor(), "out"};
  const Span<const int64_t> dims = optional_dims(*args[1]);
  ReductionPlan plan;
  TL_RETURN_IF_ERROR(
      check_mean(self, dims, dims.empty(), args[2]->to_bool(), *args[3], out, &plan));
  dense_reduce::install_fold<kDimForm, MeanOp, &mean_out, dense_reduce::OutTypes::kFloating,
                             /*kNeedsElements=*/false, /*kReducedFloats=*/true>(args, call);
  return Error::kOk;
}

Status mean_dtype_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[2]->to_tensor(), "out"};
  ReductionPlan plan;
  TL_RETURN_IF_ERROR(check_mean(self, {}, true, false, *args[1], out, &plan));
  dense_reduce::install_fold<kAllForm, MeanOp, &mean_dtype_out, dense_reduce::OutTypes::kFloating,
                             /*kNeedsElements=*/false, /*kReducedFloats=*/true>(args, call);
  return Error::kOk;
}

}  // namespace torchlight::portable
