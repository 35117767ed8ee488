// aten::prod.int_out and aten::prod.out: the product over one dim or all.
//
// Same dtype rules as sum (op_sum.cpp): `dtype` when given (out must have
// it), else out's dtype; elements are converted to it first. An empty
// product is 1. Floating products accumulate in double, integer products
// wrap, bool products are logical and.
//
// The prepare step checks all of that but the shapes at load and, for dense
// tensors of float32/float64/int32/int64 (and float16/bfloat16 into out of
// their own dtype or float32), installs a loop
// (util/dense_reduce.h) that multiplies in the same order.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dense_reduce.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/opmath.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/reduce.h"

namespace torchlight::portable {

namespace {

// The checks that need no data: the dim, the dtype rules, out's dtype.
Status check_prod(const NamedTensor& self, Span<const int64_t> dims, bool reduce_all,
                  bool keepdim, const EValue& dtype_arg, const NamedTensor& out,
                  ReductionPlan* plan) {
  bool has_dtype = false;
  ScalarType dtype = ScalarType::kFloat;
  TL_RETURN_IF_ERROR(read_optional_dtype(dtype_arg, "dtype", &has_dtype, &dtype));
  TL_RETURN_IF_ERROR(check_out_matches_dtype(has_dtype, dtype, out));
  TL_RETURN_IF_ERROR(plan->init(self, dims, reduce_all, keepdim));
  TL_RETURN_IF_ERROR(check_real_dtype(out));
  return check_real_dtype(self);
}

void prod_impl(KernelContext& ctx, const NamedTensor& self, Span<const int64_t> dims,
               bool reduce_all, bool keepdim, const EValue& dtype_arg, const NamedTensor& out) {
  ReductionPlan plan;
  TL_KERNEL_RETURN_IF_ERROR(ctx,
                            check_prod(self, dims, reduce_all, keepdim, dtype_arg, out, &plan));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, plan.out_sizes()));
  TL_SWITCH_REAL_TYPES(out.tensor.scalar_type(), ctx, "out", OUT, [&] {
    using Acc = ReduceAcc<OUT>;
    TL_KERNEL_RETURN_IF_ERROR(
        ctx, apply_reduction<OUT>(
                 self, out, plan, Acc(1), [](Acc acc, Acc x) { return opmath_mul(acc, x); },
                 [](Acc acc, int64_t) { return acc; }));
  });
}

template <typename IN, typename OUT>
struct ProdOp {
  using Acc = ReduceAcc<OUT>;
  Acc start() const { return Acc(1); }
  void step(Acc& acc, IN x, int64_t) const {
    acc = opmath_mul(acc, static_cast<Acc>(convert<opmath_t<OUT>>(convert<OUT>(x))));
  }
  OUT finish(Acc acc, int64_t) const { return convert<OUT>(acc); }
};

constexpr dense_reduce::Form kDimForm{dense_reduce::DimsKind::kInt, 1, 2, 4};
constexpr dense_reduce::Form kAllForm{dense_reduce::DimsKind::kAll, 0, dense_reduce::kNoKeepdim,
                                      2};

}  // namespace

void prod_int_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 5, *args[4]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[4]->to_tensor(), "out"};
  const int64_t dim = args[1]->to_int();
  prod_impl(ctx, self, {&dim, 1}, /*reduce_all=*/false, args[2]->to_bool(), *args[3], out);
}

void prod_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[2]->to_tensor(), "out"};
  prod_impl(ctx, self, {}, /*reduce_all=*/true, /*keepdim=*/false, *args[1], out);
}

Status prod_int_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[4]->to_tensor(), "out"};
  const int64_t dim = args[1]->to_int();
  ReductionPlan plan;
  TL_RETURN_IF_ERROR(check_prod(self, {&dim, 1}, false, args[2]->to_bool(), *args[3], out, &plan));
  dense_reduce::install_fold<kDimForm, ProdOp, &prod_int_out, dense_reduce::OutTypes::kAny,
                             /*kNeedsElements=*/false, /*kReducedFloats=*/true>(args, call);
  return Error::kOk;
}

Status prod_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[2]->to_tensor(), "out"};
  ReductionPlan plan;
  TL_RETURN_IF_ERROR(check_prod(self, {}, true, false, *args[1], out, &plan));
  dense_reduce::install_fold<kAllForm, ProdOp, &prod_out, dense_reduce::OutTypes::kAny,
                             /*kNeedsElements=*/false, /*kReducedFloats=*/true>(args, call);
  return Error::kOk;
}

}  // namespace torchlight::portable
