// aten::logsumexp.out: log(sum(exp(self))) over some dims, computed stably
// as m + log(sum(exp(self - m))) with m the maximum.
//
// ATen semantics: out must be floating; integer and bool inputs are
// converted to float32 (the default dtype) first; an infinite maximum is
// replaced by 0 so that all -inf gives -inf and any +inf gives +inf; NaN
// propagates; an empty reduction gives -inf. `dim` [] means every dim (ATen
// then fails for keepdim=False, an artefact of its implementation; we
// return the 0-d result). Rounded where ATen rounds (see below); sums in
// double. dims against self's rank and the dtypes are checked at load; the
// installed eval (one per (out, compute) dtype pair) plans a run's shape.
#include <cmath>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/reduce.h"
#include "kernels/portable/util/split_checks.h"

namespace torchlight::portable {

namespace {

// Integers and bool go through float32 as in ATen; floats are read as is.
ScalarType compute_type_of(ScalarType in_type) {
  return is_floating_point(in_type) ? in_type : ScalarType::kFloat;
}

// What the program fixes: dims against self's rank (each once), out's
// dtype (floating), self's dtype (real).
Status check_logsumexp_fixed(Span<EValue*> args) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const Span<const int64_t> dims = args[1]->to_int_list();
  const ScalarType out_type = args[3]->to_tensor().scalar_type();
  ReductionPlan plan;
  TL_RETURN_IF_ERROR(plan.init(self, dims, dims.empty(), args[2]->to_bool()));
  if (!visit_float_type(out_type, [](auto) {})) {
    return unsupported_dtype("out", out_type, kFloatTypeNames);
  }
  const ScalarType in_type = self.tensor.scalar_type();
  if (!visit_real_type(in_type, [](auto) {})) {
    return unsupported_dtype("self", in_type, kRealTypeNames);
  }
  return Error::kOk;
}

// The shaped eval for out's dtype OUT and compute dtype CTYPE.
template <typename OUT, typename CTYPE>
void logsumexp_shaped(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const Span<const int64_t> dims = args[1]->to_int_list();
  const NamedTensor out{args[3]->to_tensor(), "out"};
  ReductionPlan plan;
  TL_KERNEL_RETURN_IF_ERROR(ctx, plan.init(self, dims, dims.empty(), args[2]->to_bool()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, plan.out_sizes()));
  using Compute = opmath_t<CTYPE>;
  using OutCompute = opmath_t<OUT>;
  const LoadFn<CTYPE> load = get_load_fn<CTYPE>(self.tensor.scalar_type());
  const char* in = static_cast<const char*>(self.tensor.const_data_ptr());
  const int64_t in_size = static_cast<int64_t>(self.tensor.element_size());
  OUT* result = out.tensor.mutable_data_ptr<OUT>();
  plan.for_each_output(self.tensor, out.tensor, [&](int64_t in_base, int64_t out_offset) {
    bool first = true;
    Compute m = 0;
    plan.for_each_reduced(self.tensor, in_base, [&](int64_t offset) {
      const Compute x = load(in + offset * in_size);
      if (first || (m == m && (x != x || x > m))) m = x;
      first = false;
    });
    if (std::isinf(m)) m = 0;
    // As ATen: exp(self - m) rounded to self's dtype at each step, summed
    // (here in double) into out's dtype, then log and + m in out's dtype.
    double sum = 0;
    plan.for_each_reduced(self.tensor, in_base, [&](int64_t offset) {
      const Compute shifted = convert<Compute>(convert<CTYPE>(load(in + offset * in_size) - m));
      sum += static_cast<double>(convert<CTYPE>(std::exp(shifted)));
    });
    const OutCompute log_sum =
        convert<OutCompute>(convert<OUT>(std::log(convert<OutCompute>(convert<OUT>(sum)))));
    result[out_offset] = convert<OUT>(log_sum + convert<OutCompute>(convert<OUT>(m)));
  });
}

KernelFunction pick_logsumexp(Span<EValue*> args) {
  KernelFunction eval = nullptr;
  visit_float_type(args[3]->to_tensor().scalar_type(), [&](auto out_tag) {
    visit_float_type(compute_type_of(args[0]->to_tensor().scalar_type()), [&](auto tag) {
      eval = &logsumexp_shaped<typename decltype(out_tag)::type, typename decltype(tag)::type>;
    });
  });
  return eval;
}

}  // namespace

void logsumexp_out(KernelContext& ctx, Span<EValue*> args) {
  split_checks::picked_reference_eval<3, &check_logsumexp_fixed, &pick_logsumexp>(ctx, args);
}

Status logsumexp_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return split_checks::picked_prepare<&check_logsumexp_fixed, &pick_logsumexp>(args, call);
}

}  // namespace torchlight::portable
