// aten::argmax.out and aten::argmin.out: the index of the largest / smallest
// element along `dim`, or in the flattened tensor when `dim` is None.
//
// ATen semantics: out is int64; bool input is not supported; the first
// occurrence wins ties and the first NaN wins over everything; with dim None
// and keepdim the result has self's rank with every size 1. Reducing over a
// dim of size 0 (or all of an empty tensor) is an error.
//
// The prepare step checks the dtypes and the dim at load and, for dense
// float32/float64/int32/int64/float16/bfloat16 tensors (the last two
// compared in float, as the reference does), installs a loop
// (util/dense_reduce.h); empty reductions stay with the reference, which
// rejects them.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dense_reduce.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/opmath.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/reduce.h"

namespace torchlight::portable {

namespace {

// The checks that need no data: out's dtype, the dim, self's dtype.
Status check_arg_extremum(const NamedTensor& self, const EValue& dim_arg, bool keepdim,
                          const NamedTensor& out, ReductionPlan* plan) {
  TL_CHECK_OR_RETURN(out.tensor.scalar_type() == ScalarType::kLong, Error::kInvalidType,
                     "argument 'out' has dtype %s, expected int64",
                     to_string(out.tensor.scalar_type()));
  const bool all = dim_arg.is_none();
  const int64_t dim = all ? 0 : dim_arg.to_int();
  TL_RETURN_IF_ERROR(plan->init(self, {&dim, all ? 0u : 1u}, all, keepdim));
  if (!visit_real_type_no_bool(self.tensor.scalar_type(), [](auto) {})) {
    return unsupported_dtype("self", self.tensor.scalar_type(), kRealTypeNoBoolNames);
  }
  return Error::kOk;
}

// Strict comparisons keep the first of equal values; the first NaN is kept
// since nothing compares as better than NaN and best == best fails.
template <bool kMax, typename Compute>
bool replaces(Compute best, Compute x, bool first) {
  const bool better = kMax ? x > best : x < best;
  return first || (best == best && (x != x || better));
}

template <bool kMax>
void arg_extremum_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const bool all = args[1]->is_none();
  const NamedTensor out{args[3]->to_tensor(), "out"};

  ReductionPlan plan;
  TL_KERNEL_RETURN_IF_ERROR(ctx,
                            check_arg_extremum(self, *args[1], args[2]->to_bool(), out, &plan));
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
        if (replaces<kMax>(best, x, index == 0)) {
          best = x;
          best_index = index;
        }
        ++index;
      });
      result[out_offset] = best_index;
    });
  });
}

template <bool kMax>
struct ArgExtremum {
  template <typename IN, typename OUT>
  struct Op {
    struct Acc {
      opmath_t<IN> best;
      int64_t index;
    };
    Acc start() const { return Acc{opmath_t<IN>(), 0}; }
    void step(Acc& acc, IN in, int64_t r) const {
      const opmath_t<IN> x = convert<opmath_t<IN>>(in);
      if (replaces<kMax>(acc.best, x, r == 0)) acc = Acc{x, r};
    }
    OUT finish(const Acc& acc, int64_t) const { return acc.index; }
  };
};

constexpr dense_reduce::Form kForm{dense_reduce::DimsKind::kOptionalInt, 1, 2, 3};

template <bool kMax>
Status arg_extremum_prepare(Span<EValue*> args, PreparedCall* call) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[3]->to_tensor(), "out"};
  ReductionPlan plan;
  TL_RETURN_IF_ERROR(check_arg_extremum(self, *args[1], args[2]->to_bool(), out, &plan));
  if (!dense_reduce::loops_take_layouts(args, kForm)) {
    return Error::kOk;
  }
  auto install = [&](auto tag) {
    using IN = typename decltype(tag)::type;
    call->eval = &dense_reduce::fold_eval<kForm, typename ArgExtremum<kMax>::template Op<IN, int64_t>,
                                          IN, int64_t, &arg_extremum_out<kMax>,
                                          /*kNeedsElements=*/true>;
  };
  dense_reduce::visit_loop_dtype(self.tensor.scalar_type(), install);
  dense_reduce::visit_reduced_float(self.tensor.scalar_type(), install);  // Compared in float.
  return Error::kOk;
}

}  // namespace

void argmax_out(KernelContext& ctx, Span<EValue*> args) { arg_extremum_out<true>(ctx, args); }

void argmin_out(KernelContext& ctx, Span<EValue*> args) { arg_extremum_out<false>(ctx, args); }

Status argmax_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return arg_extremum_prepare<true>(args, call);
}

Status argmin_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return arg_extremum_prepare<false>(args, call);
}

}  // namespace torchlight::portable
