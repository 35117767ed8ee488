// The prepared path of a dtype-changing copy (_to_copy.out and
// _to_dim_order_copy.out whose out has another dtype than self): the
// (self, out) dtype pair is fixed by the program, so prepare picks, once at
// load, a loop converting that pair, and eval only resizes out and runs
// it. Each element goes through the same read_element and convert<To>
// (convert.h) as the reference's copy_view_converting, so the results are
// bit-identical. Self and out must both be dense; whatever else (a strided
// layout, a failed resize, missing data, out in self's memory) stays with
// the reference eval, which reports errors as before.
#pragma once

#include <cstdint>

#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dense_path.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/kernel_args.h"
#include "runtime/core/tensor.h"
#include "runtime/kernel/kernel.h"

namespace torchlight::portable::dense_convert {

/// out = args[kOut] gets self = args[0] converted from From to To.
template <typename From, typename To, size_t kOut, KernelFunction reference>
void convert_eval(KernelContext& ctx, Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  const Tensor out = args[kOut]->to_tensor();
  if (!dense_path::fit_out(self, out)) return reference(ctx, args);
  const int64_t n = self.numel();
  if (n > 0) {
    const char* src = self.const_data_ptr<char>();
    char* dst = out.mutable_data_ptr<char>();
    if (src == nullptr || dst == nullptr || src == dst) return reference(ctx, args);
    for (int64_t i = 0; i < n; ++i) {
      internal::write_element<To>(
          convert<To>(internal::read_element<From>(src + i * static_cast<int64_t>(sizeof(From)))),
          dst + i * static_cast<int64_t>(sizeof(To)));
    }
  }
  set_return(args, kOut + 1, *args[kOut]);
}

/// The prepare step's part for a copy from self = args[0] into out =
/// args[kOut] of another dtype: checks that both are real types, then
/// installs convert_eval for the pair when both tensors are dense. Errors
/// (at load): kInvalidType naming 'self' or 'out', as the reference.
template <size_t kOut, KernelFunction reference>
Status prepare(Span<EValue*> args, PreparedCall* call) {
  const Tensor self = args[0]->to_tensor();
  const Tensor out = args[kOut]->to_tensor();
  if (!visit_real_type(self.scalar_type(), [](auto) {})) {
    return unsupported_dtype("self", self.scalar_type(), kRealTypeNames);
  }
  if (!visit_real_type(out.scalar_type(), [](auto) {})) {
    return unsupported_dtype("out", out.scalar_type(), kRealTypeNames);
  }
  if (self.scalar_type() == out.scalar_type() || !dense_path::is_dense(self) ||
      !dense_path::is_dense(out)) {
    return Error::kOk;
  }
  visit_real_type(self.scalar_type(), [&](auto from_tag) {
    visit_real_type(out.scalar_type(), [&](auto to_tag) {
      using From = typename decltype(from_tag)::type;
      using To = typename decltype(to_tag)::type;
      if constexpr (!std::is_same_v<From, To>) {
        call->eval = &convert_eval<From, To, kOut, reference>;
      }
    });
  });
  return Error::kOk;
}

}  // namespace torchlight::portable::dense_convert
