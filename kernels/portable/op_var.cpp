// aten::var.correction_out, aten::var.out, aten::std.correction_out and
// aten::std.out: the variance / standard deviation over some dims or all.
//
// ATen semantics: self must be floating; out must be floating and self is
// converted to out's dtype first; `dim` None or [] means every dim;
// correction defaults to 1 (var.out's unbiased=True), and the divisor is
// max(0, N - correction), so N <= correction gives inf or NaN (0 / 0). We
// compute the mean and the sum of squared deviations in double (two passes)
// and round once.
#include <cmath>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/reduce.h"

namespace torchlight::portable {

namespace {

void var_impl(KernelContext& ctx, const NamedTensor& self, const EValue& dim_arg, double correction,
              bool keepdim, const NamedTensor& out, bool take_sqrt) {
  TL_KERNEL_CHECK(ctx, is_floating_point(self.tensor.scalar_type()), Error::kInvalidType,
                  "argument 'self' has dtype %s, expected a floating dtype",
                  to_string(self.tensor.scalar_type()));
  Span<const int64_t> dims;
  if (!dim_arg.is_none()) dims = dim_arg.to_int_list();
  ReductionPlan plan;
  TL_KERNEL_RETURN_IF_ERROR(ctx, plan.init(self, dims, dims.empty(), keepdim));
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

void correction_out(KernelContext& ctx, Span<EValue*> args, bool take_sqrt) {
  set_return(args, 5, *args[4]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[4]->to_tensor(), "out"};
  const double correction = args[2]->is_none() ? 1.0 : args[2]->scalar_as_double();
  var_impl(ctx, self, *args[1], correction, args[3]->to_bool(), out, take_sqrt);
}

void unbiased_out(KernelContext& ctx, Span<EValue*> args, bool take_sqrt) {
  set_return(args, 5, *args[4]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[4]->to_tensor(), "out"};
  const double correction = args[2]->to_bool() ? 1.0 : 0.0;
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

}  // namespace torchlight::portable
