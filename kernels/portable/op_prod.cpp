// aten::prod.int_out and aten::prod.out: the product over one dim or all.
//
// Same dtype rules as sum (op_sum.cpp): `dtype` when given (out must have
// it), else out's dtype; elements are converted to it first. An empty
// product is 1. Floating products accumulate in double, integer products
// wrap, bool products are logical and.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/opmath.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/reduce.h"

namespace torchlight::portable {

namespace {

void prod_impl(KernelContext& ctx, const NamedTensor& self, Span<const int64_t> dims,
               bool reduce_all, bool keepdim, const EValue& dtype_arg, const NamedTensor& out) {
  bool has_dtype = false;
  ScalarType dtype = ScalarType::kFloat;
  TL_KERNEL_RETURN_IF_ERROR(ctx, read_optional_dtype(dtype_arg, "dtype", &has_dtype, &dtype));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_out_matches_dtype(has_dtype, dtype, out));
  ReductionPlan plan;
  TL_KERNEL_RETURN_IF_ERROR(ctx, plan.init(self, dims, reduce_all, keepdim));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, plan.out_sizes()));
  TL_SWITCH_REAL_TYPES(out.tensor.scalar_type(), ctx, "out", OUT, [&] {
    using Acc = ReduceAcc<OUT>;
    TL_KERNEL_RETURN_IF_ERROR(
        ctx, apply_reduction<OUT>(
                 self, out, plan, Acc(1), [](Acc acc, Acc x) { return opmath_mul(acc, x); },
                 [](Acc acc, int64_t) { return acc; }));
  });
}

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

}  // namespace torchlight::portable
