// aten::_softmax.out and aten::_log_softmax.out along one dim.
//
// ATen semantics: self must be floating and out must have its dtype;
// half_to_float=True is rejected (ATen's CPU kernels do not support it); a
// 0-d tensor takes dim 0 or -1 (softmax 1, log_softmax 0). Computed per line
// in double: subtract the maximum, exponentiate, normalise; rounded once.
// A line containing NaN gives NaN; a line of all -inf gives NaN, as in ATen.
#include <cmath>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/reduce.h"

namespace torchlight::portable {

namespace {

template <bool kLog>
void softmax_impl(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[3]->to_tensor(), "out"};
  TL_KERNEL_CHECK(ctx, !args[2]->to_bool(), Error::kNotSupported,
                  "argument 'half_to_float' is true, which CPU kernels do not support");
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, normalize_dim(args[1]->to_int(), self.tensor.dim(), "dim", &dim));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_same_dtype(self, out));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, self.tensor.sizes()));

  TL_SWITCH_FLOAT_TYPES(self.tensor.scalar_type(), ctx, "self", CTYPE, [&] {
    const CTYPE* in = self.tensor.const_data_ptr<CTYPE>();
    CTYPE* result = out.tensor.mutable_data_ptr<CTYPE>();
    for_each_line(self.tensor, out.tensor, dim,
                  [&](int64_t in_base, int64_t out_base, int64_t length, int64_t in_stride,
                      int64_t out_stride) {
                    auto x = [&](int64_t i) {
                      return convert<double>(in[in_base + i * in_stride]);
                    };
                    double m = -INFINITY;
                    for (int64_t i = 0; i < length; ++i) {
                      const double v = x(i);
                      if (v != v || v > m) m = v;
                      if (m != m) break;
                    }
                    double sum = 0;
                    for (int64_t i = 0; i < length; ++i) sum += std::exp(x(i) - m);
                    const double log_sum = std::log(sum);
                    for (int64_t i = 0; i < length; ++i) {
                      const double y = kLog ? x(i) - m - log_sum : std::exp(x(i) - m) / sum;
                      result[out_base + i * out_stride] = convert<CTYPE>(y);
                    }
                  });
  });
}

}  // namespace

void softmax_out(KernelContext& ctx, Span<EValue*> args) { softmax_impl<false>(ctx, args); }

void log_softmax_out(KernelContext& ctx, Span<EValue*> args) { softmax_impl<true>(ctx, args); }

}  // namespace torchlight::portable
