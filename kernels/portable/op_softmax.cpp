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
#include "kernels/portable/util/dense_path.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/reduce.h"

namespace torchlight::portable {

namespace {

// One line of `length` elements (every in_stride-th from `in`, results
// every out_stride-th into `result`): the arithmetic every path shares.
template <bool kLog, typename CTYPE>
void softmax_line(const CTYPE* in, CTYPE* result, int64_t length, int64_t in_stride,
                  int64_t out_stride) {
  auto x = [&](int64_t i) { return convert<double>(in[i * in_stride]); };
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
    result[i * out_stride] = convert<CTYPE>(y);
  }
}

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
                    softmax_line<kLog>(in + in_base, result + out_base, length, in_stride,
                                       out_stride);
                  });
  });
}

}  // namespace

void softmax_out(KernelContext& ctx, Span<EValue*> args) { softmax_impl<false>(ctx, args); }

void log_softmax_out(KernelContext& ctx, Span<EValue*> args) { softmax_impl<true>(ctx, args); }

namespace {

// The prepared eval: self and out dense of type CTYPE (checked at load)
// and `dim` the last of a rank-1+ tensor, so the lines are the contiguous
// rows. A failed resize or missing data goes to the reference.
template <bool kLog, typename CTYPE>
void softmax_last_dim_eval(KernelContext& ctx, Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  const Tensor out = args[3]->to_tensor();
  const int64_t n = self.numel();
  const int64_t length = self.size(self.dim() - 1);
  const CTYPE* in = self.const_data_ptr<CTYPE>();
  if (!dense_path::fit_out(self, out)) return softmax_impl<kLog>(ctx, args);
  CTYPE* result = out.mutable_data_ptr<CTYPE>();
  if (n > 0 && (in == nullptr || result == nullptr)) return softmax_impl<kLog>(ctx, args);
  set_return(args, 4, *args[3]);
  for (int64_t at = 0; at < n; at += length) softmax_line<kLog>(in + at, result + at, length, 1, 1);
}

// half_to_float, `dim` and the dtypes are the program's: checked at load
// with the reference's messages.
template <bool kLog>
Status softmax_prepare(Span<EValue*> args, PreparedCall* call) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[3]->to_tensor(), "out"};
  TL_CHECK_OR_RETURN(!args[2]->to_bool(), Error::kNotSupported,
                     "argument 'half_to_float' is true, which CPU kernels do not support");
  size_t dim = 0;
  TL_RETURN_IF_ERROR(normalize_dim(args[1]->to_int(), self.tensor.dim(), "dim", &dim));
  TL_RETURN_IF_ERROR(check_same_dtype(self, out));
  if (!visit_float_type(self.tensor.scalar_type(), [](auto) {})) {
    return unsupported_dtype("self", self.tensor.scalar_type(), kFloatTypeNames);
  }
  if (self.tensor.dim() == 0 || dim + 1 != self.tensor.dim() ||
      !dense_path::is_dense(self.tensor) || !dense_path::is_dense(out.tensor)) {
    return Error::kOk;
  }
  visit_float_type(self.tensor.scalar_type(), [&](auto tag) {
    call->eval = &softmax_last_dim_eval<kLog, typename decltype(tag)::type>;
  });
  return Error::kOk;
}

}  // namespace

Status softmax_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return softmax_prepare<false>(args, call);
}

Status log_softmax_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return softmax_prepare<true>(args, call);
}

}  // namespace torchlight::portable
