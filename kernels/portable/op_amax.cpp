// aten::amax.out and aten::amin.out: the largest / smallest element over
// some dims (dim=[] means all).
//
// ATen semantics: out has self's dtype (every real type, bool included);
// NaN wins (propagates); there is no identity, so reducing over a dim of
// size 0, or over all dims of an empty tensor, is an error.
//
// The prepare step checks the dtypes and dims at load and, for dense
// float32/float64/int32/int64/float16/bfloat16 tensors (the last two
// compared in float, as the reference does), installs a loop over the
// reduced dims (util/dense_reduce.h); empty reductions stay with the
// reference, which rejects them.
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

// The checks that need no data: out's dtype, the dims, self's dtype.
Status check_extremum(const NamedTensor& self, Span<const int64_t> dims, bool keepdim,
                      const NamedTensor& out, ReductionPlan* plan) {
  TL_RETURN_IF_ERROR(check_same_dtype(self, out));
  TL_RETURN_IF_ERROR(plan->init(self, dims, dims.empty(), keepdim));
  return check_real_dtype(self);
}

// x replaces best when it is the first, NaN, or better, unless best is
// already NaN (x != x: NaN; nothing replaces a NaN).
template <bool kMax, typename Compute>
bool replaces(Compute best, Compute x, bool first) {
  const bool better = kMax ? x > best : x < best;
  return first || (best == best && (x != x || better));
}

template <bool kMax>
void extremum_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const Span<const int64_t> dims = args[1]->to_int_list();
  const NamedTensor out{args[3]->to_tensor(), "out"};

  ReductionPlan plan;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_extremum(self, dims, args[2]->to_bool(), out, &plan));
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
        if (replaces<kMax>(best, x, first)) best = x;
        first = false;
      });
      result[out_offset] = convert<CTYPE>(best);
    });
  });
}

template <bool kMax>
struct Extremum {
  template <typename IN, typename OUT>
  struct Op {
    using Acc = opmath_t<IN>;
    Acc start() const { return Acc(); }
    void step(Acc& best, IN in, int64_t r) const {
      const Acc x = convert<Acc>(in);
      if (replaces<kMax>(best, x, r == 0)) best = x;
    }
    OUT finish(Acc best, int64_t) const { return convert<OUT>(best); }
  };
};

constexpr dense_reduce::Form kForm{dense_reduce::DimsKind::kList, 1, 2, 3};

template <bool kMax>
Status extremum_prepare(Span<EValue*> args, PreparedCall* call) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[3]->to_tensor(), "out"};
  ReductionPlan plan;
  TL_RETURN_IF_ERROR(check_extremum(self, args[1]->to_int_list(), args[2]->to_bool(), out, &plan));
  dense_reduce::install_fold<kForm, Extremum<kMax>::template Op, &extremum_out<kMax>,
                             dense_reduce::OutTypes::kSame, /*kNeedsElements=*/true,
                             /*kReducedFloats=*/true>(args, call);
  return Error::kOk;
}

}  // namespace

void amax_out(KernelContext& ctx, Span<EValue*> args) { extremum_out<true>(ctx, args); }

void amin_out(KernelContext& ctx, Span<EValue*> args) { extremum_out<false>(ctx, args); }

Status amax_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return extremum_prepare<true>(args, call);
}

Status amin_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return extremum_prepare<false>(args, call);
}

}  // namespace torchlight::portable
