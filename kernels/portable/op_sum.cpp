// aten::sum.IntList_out and aten::sum.out: the sum over some dims or all.
//
// ATen semantics: `dim` None or [] sums every dim; negative dims wrap; a dim
// named twice is an error. The result dtype is `dtype` when given (out must
// then have exactly it), else out's dtype; input elements are converted to
// it before summing (so float input into an int32 out truncates each
// element). An empty reduction gives 0. Floating sums accumulate in double
// and round once, integer sums wrap, bool sums are logical or.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/opmath.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/reduce.h"

namespace torchlight::portable {

namespace {

void sum_impl(KernelContext& ctx, const NamedTensor& self, Span<const int64_t> dims,
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
                 self, out, plan, Acc(0), [](Acc acc, Acc x) { return opmath_add(acc, x); },
                 [](Acc acc, int64_t) { return acc; }));
  });
}

}  // namespace

void sum_intlist_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 5, *args[4]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[4]->to_tensor(), "out"};
  Span<const int64_t> dims;
  if (!args[1]->is_none()) dims = args[1]->to_int_list();
  sum_impl(ctx, self, dims, dims.empty(), args[2]->to_bool(), *args[3], out);
}

void sum_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[2]->to_tensor(), "out"};
  sum_impl(ctx, self, {}, /*reduce_all=*/true, /*keepdim=*/false, *args[1], out);
}

}  // namespace torchlight::portable
