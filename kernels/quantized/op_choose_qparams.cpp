// quantized_decomposed::choose_qparams.Tensor_out and
// choose_qparams_per_token_asymmetric.out: a scale and zero point from the
// data, as torch computes them (each step rounded to the dtype torch gives it).
//   choose_qparams (torch.ao.quantization.utils.determine_qparams, per-tensor
//   affine): min/max over the tensor widened to include 0, scale =
//   max((max - min) / (qmax - qmin), eps), zero_point = clamp(qmin -
//   round(min / scale), qmin, qmax); outputs float64 [1] and int64 [1].
//   per token asymmetric (XNNPACK's rule, qmin/qmax fixed at -128/127):
//   per last-dimension row, scale clamped at float32 eps, the zero point
//   from whichever end has the smaller error; outputs [..., 1].
// Upstream's runtime kernel for choose_qparams differs from torch (it
// ignores eps and nudges small scales); this follows torch.
#include <cmath>

#include "kernels/quantized/per_token_qparams.h"
#include "kernels/quantized/quant_common.h"
#include "kernels/quantized/quantized_ops.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/schemas/op_schemas.h"

namespace torchlight::quantized {
namespace {

Status check_float_input(const NamedTensor& input) {
  TL_CHECK_OR_RETURN(visit_quant_float_input(input.tensor.scalar_type(), [](auto) {}),
                     Error::kInvalidType, "argument 'input' has dtype %s, expected %s",
                     to_string(input.tensor.scalar_type()), kQuantFloatInputNames);
  return Error::kOk;
}

Status check_qparam_outs(const NamedTensor& scale_out, const NamedTensor& zero_point_out) {
  TL_RETURN_IF_ERROR(check_dtype(scale_out, ScalarType::kDouble));
  return check_dtype(zero_point_out, ScalarType::kLong);
}

Status check_tensor_args(Span<EValue*> args) {
  TL_RETURN_IF_ERROR(check_float_input({args[0]->to_tensor(), "input"}));
  ScalarType dtype = ScalarType::kFloat;
  TL_RETURN_IF_ERROR(scalar_type_arg(*args[4], "dtype", &dtype));
  int64_t low = 0, high = 0;
  TL_CHECK_OR_RETURN(quant_bounds(dtype, &low, &high), Error::kInvalidType,
                     "argument 'dtype' is %s, expected %s", to_string(dtype), kQuantIntTypeNames);
  const int64_t qmin = args[1]->to_int(), qmax = args[2]->to_int();
  // torch's validate_qmin_qmax.
  TL_CHECK_OR_RETURN(qmin <= 0 && 0 <= qmax, Error::kInvalidArgument,
                     "arguments 'quant_min' (%lld) and 'quant_max' (%lld) must include 0",
                     static_cast<long long>(qmin), static_cast<long long>(qmax));
  TL_CHECK_OR_RETURN(qmin < qmax, Error::kInvalidArgument,
                     "argument 'quant_min' (%lld) must be less than 'quant_max' (%lld)",
                     static_cast<long long>(qmin), static_cast<long long>(qmax));
  const double eps = args[3]->to_double();
  TL_CHECK_OR_RETURN(std::isfinite(eps) && eps > 0, Error::kInvalidArgument,
                     "argument 'eps' is %g, expected a finite value > 0", eps);
  return check_qparam_outs({args[5]->to_tensor(), "scale_out"},
                           {args[6]->to_tensor(), "zero_point_out"});
}

// Min and max of n values of T, as doubles; false if one is NaN.
template <typename T>
bool min_max(const T* x, int64_t n, double* mn, double* mx) {
  double lo = static_cast<float>(x[0]), hi = lo;
  for (int64_t i = 0; i < n; ++i) {
    const double v = static_cast<float>(x[i]);
    if (v != v) return false;
    lo = v < lo ? v : lo;
    hi = hi < v ? v : hi;
  }
  *mn = lo;
  *mx = hi;
  return true;
}

}  // namespace

Status choose_qparams_tensor_prepare(PrepareContext&, Span<EValue*> args, PreparedCall*) {
  return check_tensor_args(args);
}

void choose_qparams_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_tensor_args(args));
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor scale_out{args[5]->to_tensor(), "scale_out"};
  const NamedTensor zero_point_out{args[6]->to_tensor(), "zero_point_out"};
  TL_KERNEL_CHECK(ctx, input.tensor.numel() > 0, Error::kInvalidArgument,
                  "argument 'input' is empty; its min and max are undefined");
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_contiguous(input));
  const SizesType one[1] = {1};
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::resize_tensor(scale_out, {one, 1}));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::resize_tensor(zero_point_out, {one, 1}));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_contiguous(scale_out));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_contiguous(zero_point_out));
  const int64_t qmin = args[1]->to_int(), qmax = args[2]->to_int();
  const float eps = static_cast<float>(args[3]->to_double());
  bool finite = true;
  float scale = 0;
  double min_neg = 0;
  visit_quant_float_input(input.tensor.scalar_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    double mn = 0, mx = 0;
    finite = min_max(input.tensor.const_data_ptr<T>(), input.tensor.numel(), &mn, &mx);
    min_neg = mn < 0 ? mn : 0.0;
    const double max_pos = mx > 0 ? mx : 0.0;
    // (max - min) / float(qmax - qmin) in T, then torch.max with eps in float32.
    const double range = round_to<T>(max_pos - min_neg);
    const float s = static_cast<float>(round_to<T>(range / static_cast<double>(qmax - qmin)));
    scale = s < eps ? eps : s;
  });
  TL_KERNEL_CHECK(ctx, finite, Error::kInvalidArgument, "argument 'input' holds NaN");
  // zero_point = quant_min - round(min_neg / scale).to(int32), clamped.
  const float steps = std::nearbyint(static_cast<float>(min_neg) / scale);
  int64_t zero_point = qmin - static_cast<int64_t>(portable::convert<int32_t>(steps));
  zero_point = zero_point < qmin ? qmin : (zero_point > qmax ? qmax : zero_point);
  scale_out.tensor.mutable_data_ptr<double>()[0] = scale;
  zero_point_out.tensor.mutable_data_ptr<int64_t>()[0] = zero_point;
}

namespace {

Status check_per_token_args(Span<EValue*> args) {
  const NamedTensor input{args[0]->to_tensor(), "input"};
  TL_RETURN_IF_ERROR(check_float_input(input));
  ScalarType dtype = ScalarType::kFloat;
  TL_RETURN_IF_ERROR(scalar_type_arg(*args[1], "dtype", &dtype));
  TL_CHECK_OR_RETURN(input.tensor.dim() >= 1, Error::kInvalidArgument,
                     "argument 'input' must have at least one dimension (the token's values)");
  return check_qparam_outs({args[2]->to_tensor(), "scale_out"},
                           {args[3]->to_tensor(), "zero_point_out"});
}

}  // namespace

Status choose_qparams_per_token_asymmetric_prepare(PrepareContext&, Span<EValue*> args,
                                                   PreparedCall*) {
  return check_per_token_args(args);
}

void choose_qparams_per_token_asymmetric_out(KernelContext& ctx, Span<EValue*> args) {
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_per_token_args(args));
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor scale_out{args[2]->to_tensor(), "scale_out"};
  const NamedTensor zero_point_out{args[3]->to_tensor(), "zero_point_out"};
  const size_t dim = input.tensor.dim();
  const int64_t n = input.tensor.size(dim - 1);
  TL_KERNEL_CHECK(ctx, n > 0, Error::kInvalidArgument,
                  "argument 'input' has tokens of 0 values; their min and max are undefined");
  SizesType sizes[kMaxTensorDim];
  for (size_t d = 0; d + 1 < dim; ++d) sizes[d] = input.tensor.size(d);
  sizes[dim - 1] = 1;
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::resize_tensor(scale_out, {sizes, dim}));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::resize_tensor(zero_point_out, {sizes, dim}));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_contiguous(input));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_contiguous(scale_out));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_contiguous(zero_point_out));
  const int64_t tokens = input.tensor.numel() / n;
  double* scales = scale_out.tensor.mutable_data_ptr<double>();
  int64_t* zero_points = zero_point_out.tensor.mutable_data_ptr<int64_t>();
  visit_quant_float_input(input.tensor.scalar_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = input.tensor.const_data_ptr<T>();
    for (int64_t t = 0; t < tokens; ++t) token_qparams(x + t * n, n, &scales[t], &zero_points[t]);
  });
}

}  // namespace torchlight::quantized
