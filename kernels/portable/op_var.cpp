// aten::var.correction_out, aten::var.out, aten::std.correction_out and
// aten::std.out: the variance / standard deviation over some dims or all.
//
// ATen semantics: self must be floating; out must be floating and self is
// converted to out's dtype first; `dim` None or [] means every dim;
// correction defaults to 1 (var.out's unbiased=True), and the divisor is
// max(0, N - correction), so N <= correction gives inf or NaN (0 / 0). We
// compute the mean and the sum of squared deviations in double (two passes)
// and round once.
//
// The prepare step checks the dtypes and dims at load and, for dense
// float32/float64 tensors, installs a loop over the reduced dims
// (util/dense_reduce.h) that makes the same two passes in the same order.
#include <cmath>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dense_reduce.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/reduce.h"

namespace torchlight::portable {

namespace {

// The checks that need no data: self's dtype, the dims, out's dtype.
Status check_var(const NamedTensor& self, const EValue& dim_arg, bool keepdim,
                 const NamedTensor& out, ReductionPlan* plan) {
  TL_CHECK_OR_RETURN(is_floating_point(self.tensor.scalar_type()), Error::kInvalidType,
                     "argument 'self' has dtype %s, expected a floating dtype",
                     to_string(self.tensor.scalar_type()));
  Span<const int64_t> dims;
  if (!dim_arg.is_none()) dims = dim_arg.to_int_list();
  TL_RETURN_IF_ERROR(plan->init(self, dims, dims.empty(), keepdim));
  if (!visit_float_type(out.tensor.scalar_type(), [](auto) {})) {
    return unsupported_dtype("out", out.tensor.scalar_type(), kFloatTypeNames);
  }
  return Error::kOk;
}

void var_impl(KernelContext& ctx, const NamedTensor& self, const EValue& dim_arg, double correction,
              bool keepdim, const NamedTensor& out, bool take_sqrt) {
  ReductionPlan plan;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_var(self, dim_arg, keepdim, out, &plan));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, plan.out_sizes()));
  TL_SWITCH_FLOAT_TYPES(out.tensor.scalar_type(), ctx, "out", OUT, [&] {
    const LoadFn<OUT> load = get_load_fn<OUT>(self.tensor.scalar_type());
    const char* in = static_cast<const char*>(self.tensor.const_data_ptr());
    const int64_t in_size = static_cast<int64_t>(self.tensor.element_size());
    OUT* result = out.tensor.mutable_data_ptr<OUT>();
    const double n = static_cast<double>(plan.reduced_numel());
    const double divisor = n > correction ? n - correction : 0.0;
    plan.for_each_output(self.tensor, out.tensor, [&](int64_t in_base, int64_t out_offset) {
      double sum = 0;
      plan.for_each_reduced(self.tensor, in_base, [&](int64_t offset) {
        sum += static_cast<double>(load(in + offset * in_size));
      });
      const double mean = sum / n;
      double m2 = 0;
      plan.for_each_reduced(self.tensor, in_base, [&](int64_t offset) {
        const double d = static_cast<double>(load(in + offset * in_size)) - mean;
        m2 += d * d;
      });
      const double var = m2 / divisor;
      result[out_offset] = convert<OUT>(take_sqrt ? std::sqrt(var) : var);
    });
  });
}

// var.correction's `correction` (None: 1), or var.out's `unbiased`.
double correction_of(const EValue& arg, bool is_correction) {
  if (is_correction) return arg.is_none() ? 1.0 : arg.scalar_as_double();
  return arg.to_bool() ? 1.0 : 0.0;
}

void correction_out(KernelContext& ctx, Span<EValue*> args, bool take_sqrt) {
  set_return(args, 5, *args[4]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[4]->to_tensor(), "out"};
  const double correction = correction_of(*args[2], true);
  var_impl(ctx, self, *args[1], correction, args[3]->to_bool(), out, take_sqrt);
}

void unbiased_out(KernelContext& ctx, Span<EValue*> args, bool take_sqrt) {
  set_return(args, 5, *args[4]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[4]->to_tensor(), "out"};
  const double correction = correction_of(*args[2], false);
  var_impl(ctx, self, *args[1], correction, args[3]->to_bool(), out, take_sqrt);
}

}  // namespace

void var_correction_out(KernelContext& ctx, Span<EValue*> args) {
  correction_out(ctx, args, /*take_sqrt=*/false);
}

void var_out(KernelContext& ctx, Span<EValue*> args) { unbiased_out(ctx, args, false); }

void std_correction_out(KernelContext& ctx, Span<EValue*> args) {
  correction_out(ctx, args, /*take_sqrt=*/true);
}

void std_out(KernelContext& ctx, Span<EValue*> args) { unbiased_out(ctx, args, true); }

namespace {

constexpr dense_reduce::Form kForm{dense_reduce::DimsKind::kList, 1, 3, 4};

// The prepared eval: var_impl's two passes over each column, a block of
// columns at a time.
template <typename IN, typename OUT, bool kIsCorrection, bool kSqrt, KernelFunction reference>
void var_eval(KernelContext& ctx, Span<EValue*> args) {
  dense_reduce::Located<IN, OUT> at;
  if (!dense_reduce::locate(kForm, args, &at)) return reference(ctx, args);
  const double correction = correction_of(*args[2], kIsCorrection);
  const double n = static_cast<double>(at.blocks.reduced);
  const double divisor = n > correction ? n - correction : 0.0;
  auto load = [](IN x) { return static_cast<double>(convert<opmath_t<OUT>>(convert<OUT>(x))); };
  constexpr int64_t kColumns = dense_reduce::kColumns;
  dense_reduce::for_each_block(at, [&](const IN* first, const dense_reduce::Walk& rows,
                                       int64_t width, OUT* result) {
    double mean[kColumns];
    double m2[kColumns];
    for (int64_t j = 0; j < width; ++j) mean[j] = m2[j] = 0;
    rows.each([&](int64_t, int64_t offset) {
      for (int64_t j = 0; j < width; ++j) mean[j] += load(first[offset + j]);
    });
    for (int64_t j = 0; j < width; ++j) mean[j] /= n;
    rows.each([&](int64_t, int64_t offset) {
      for (int64_t j = 0; j < width; ++j) {
        const double d = load(first[offset + j]) - mean[j];
        m2[j] += d * d;
      }
    });
    for (int64_t j = 0; j < width; ++j) {
      const double var = m2[j] / divisor;
      result[j] = convert<OUT>(kSqrt ? std::sqrt(var) : var);
    }
  });
}

template <bool kIsCorrection, bool kSqrt, KernelFunction reference>
Status var_prepare(Span<EValue*> args, PreparedCall* call) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[4]->to_tensor(), "out"};
  ReductionPlan plan;
  TL_RETURN_IF_ERROR(check_var(self, *args[1], args[3]->to_bool(), out, &plan));
  if (!dense_reduce::loops_take_layouts(args, kForm)) {
    return Error::kOk;
  }
  dense_reduce::visit_loop_float(self.tensor.scalar_type(), [&](auto in_tag) {
    dense_reduce::visit_loop_float(out.tensor.scalar_type(), [&](auto out_tag) {
      call->eval = &var_eval<typename decltype(in_tag)::type, typename decltype(out_tag)::type,
                             kIsCorrection, kSqrt, reference>;
    });
  });
  return Error::kOk;
}

}  // namespace

Status var_correction_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return var_prepare<true, false, &var_correction_out>(args, call);
}

Status var_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return var_prepare<false, false, &var_out>(args, call);
}

Status std_correction_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return var_prepare<true, true, &std_correction_out>(args, call);
}

Status std_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return var_prepare<false, true, &std_out>(args, call);
}

}  // namespace torchlight::portable
