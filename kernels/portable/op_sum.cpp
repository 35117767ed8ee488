// aten::sum.IntList_out and aten::sum.out: the sum over some dims or all.
//
// ATen semantics: `dim` None or [] sums every dim; negative dims wrap; a dim
// named twice is an error. The result dtype is `dtype` when given (out must
// then have exactly it), else out's dtype; input elements are converted to
// it before summing (so float input into an int32 out truncates each
// element). An empty reduction gives 0. Floating sums accumulate in double
// and round once, integer sums wrap, bool sums are logical or.
//
// The prepare step checks all of that but the shapes at load and, for dense
// tensors of float32/float64/int32/int64 (and float16/bfloat16 into their own
// dtype or float32), installs a loop over the
// reduced dims (util/dense_reduce.h) that adds in the same order.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dense_reduce.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/opmath.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/reduce.h"

namespace torchlight::portable {

namespace {

// The checks that need no data: dims, the dtype rules, out's dtype.
Status check_sum(const NamedTensor& self, Span<const int64_t> dims, bool reduce_all,
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

void sum_impl(KernelContext& ctx, const NamedTensor& self, Span<const int64_t> dims,
              bool reduce_all, bool keepdim, const EValue& dtype_arg, const NamedTensor& out) {
  ReductionPlan plan;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_sum(self, dims, reduce_all, keepdim, dtype_arg, out, &plan));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, plan.out_sizes()));
  TL_SWITCH_REAL_TYPES(out.tensor.scalar_type(), ctx, "out", OUT, [&] {
    using Acc = ReduceAcc<OUT>;
    TL_KERNEL_RETURN_IF_ERROR(
        ctx, apply_reduction<OUT>(
                 self, out, plan, Acc(0), [](Acc acc, Acc x) { return opmath_add(acc, x); },
                 [](Acc acc, int64_t) { return acc; }));
  });
}

Span<const int64_t> optional_dims(const EValue& dim) {
  return dim.is_none() ? Span<const int64_t>() : dim.to_int_list();
}

// One element as the reference adds it: converted to OUT, then to the
// accumulator.
template <typename IN, typename OUT>
struct SumOp {
  using Acc = ReduceAcc<OUT>;
  Acc start() const { return Acc(0); }
  void step(Acc& acc, IN x, int64_t) const {
    acc = opmath_add(acc, static_cast<Acc>(convert<opmath_t<OUT>>(convert<OUT>(x))));
  }
  OUT finish(Acc acc, int64_t) const { return convert<OUT>(acc); }
};

constexpr dense_reduce::Form kIntListForm{dense_reduce::DimsKind::kList, 1, 2, 4};
constexpr dense_reduce::Form kAllForm{dense_reduce::DimsKind::kAll, 0, dense_reduce::kNoKeepdim,
                                      2};

}  // namespace

void sum_intlist_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 5, *args[4]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[4]->to_tensor(), "out"};
  const Span<const int64_t> dims = optional_dims(*args[1]);
  sum_impl(ctx, self, dims, dims.empty(), args[2]->to_bool(), *args[3], out);
}

void sum_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[2]->to_tensor(), "out"};
  sum_impl(ctx, self, {}, /*reduce_all=*/true, /*keepdim=*/false, *args[1], out);
}

Status sum_intlist_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[4]->to_tensor(), "out"};
  const Span<const int64_t> dims = optional_dims(*args[1]);
  ReductionPlan plan;
  TL_RETURN_IF_ERROR(check_sum(self, dims, dims.empty(), args[2]->to_bool(), *args[3], out, &plan));
  dense_reduce::install_fold<kIntListForm, SumOp, &sum_intlist_out, dense_reduce::OutTypes::kAny,
                             /*kNeedsElements=*/false, /*kReducedFloats=*/true>(args, call);
  return Error::kOk;
}

Status sum_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[2]->to_tensor(), "out"};
  ReductionPlan plan;
  TL_RETURN_IF_ERROR(check_sum(self, {}, true, false, *args[1], out, &plan));
  dense_reduce::install_fold<kAllForm, SumOp, &sum_out, dense_reduce::OutTypes::kAny,
                             /*kNeedsElements=*/false, /*kReducedFloats=*/true>(args, call);
  return Error::kOk;
}

}  // namespace torchlight::portable
