// aten::native_layer_norm.out: normalization over the trailing dimensions
// given by normalized_shape (nn.LayerNorm; the GPT blocks' norm).
//
// ATen semantics: input [*lead, *normalized_shape]; for each of the M =
// prod(lead) rows of N = prod(normalized_shape) elements:
//   mean = sum(x) / N, rstd = 1 / sqrt(biased variance + eps),
//   out = (x - mean) * rstd * weight + bias,
// weight and bias (optional) have exactly normalized_shape. out0 has the
// input's shape and dtype; out1 (mean) and out2 (rstd) have shape [*lead,
// 1, ..., 1] (the input's rank) and the parameters' dtype: the input's, or
// float32 when a float16/bfloat16 input has float32 parameters. An empty row
// (N == 0) has mean 0 and rstd NaN, as ATen. Statistics are in double.
//
// Prepare (at load) checks normalized_shape, the parameters' shapes and
// the dtypes, and picks the loop for them; the eval checks only the
// input's shape of each run.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/linear_offsets.h"
#include "kernels/portable/util/normalization.h"
#include "kernels/portable/util/opmath.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

namespace {

bool same_shape(Span<const SizesType> a, Span<const int64_t> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

template <typename T, typename P>
void layer_norm(const Tensor& in, size_t lead_dims, const Tensor& weight, const Tensor& bias,
                double eps, const Tensor& out, const Tensor& mean_out, const Tensor& rstd_out) {
  using Acc = opmath_t<T>;
  const LinearOffsets in_lead(in, 0, lead_dims);
  const LinearOffsets in_row(in, lead_dims, in.dim());
  const LinearOffsets out_lead(out, 0, lead_dims);
  const LinearOffsets out_row(out, lead_dims, out.dim());
  const LinearOffsets stat_lead(mean_out, 0, lead_dims);
  const LinearOffsets rstd_lead(rstd_out, 0, lead_dims);
  const LinearOffsets w_offsets = weight.defined() ? LinearOffsets(weight) : LinearOffsets();
  const LinearOffsets b_offsets = bias.defined() ? LinearOffsets(bias) : LinearOffsets();
  int64_t rows = 1;
  for (size_t d = 0; d < lead_dims; ++d) rows *= in.size(d);
  int64_t n = 1;
  for (size_t d = lead_dims; d < in.dim(); ++d) n *= in.size(d);
  const T* x = in.const_data_ptr<T>();
  T* y = out.mutable_data_ptr<T>();
  const P* w = weight.defined() ? weight.const_data_ptr<P>() : nullptr;
  const P* b = bias.defined() ? bias.const_data_ptr<P>() : nullptr;

  for (int64_t m = 0; m < rows; ++m) {
    const T* x_row = x + in_lead.at(m);
    double mean;
    double variance;
    compute_moments(x_row, n, [&](int64_t i) { return in_row.at(i); }, &mean, &variance);
    const double rstd = inverse_std(variance, eps);
    mean_out.mutable_data_ptr<P>()[stat_lead.at(m)] = convert<P>(mean);
    rstd_out.mutable_data_ptr<P>()[rstd_lead.at(m)] = convert<P>(rstd);
    // y = (x * scale + shift) * weight + bias, in opmath.
    const Acc scale = static_cast<Acc>(rstd);
    const Acc shift = static_cast<Acc>(-mean * rstd);
    T* y_row = y + out_lead.at(m);
    for (int64_t i = 0; i < n; ++i) {
      Acc v = convert<Acc>(x_row[in_row.at(i)]) * scale + shift;
      if (w != nullptr) v *= convert<Acc>(w[w_offsets.at(i)]);
      if (b != nullptr) v += convert<Acc>(b[b_offsets.at(i)]);
      y_row[out_row.at(i)] = convert<T>(v);
    }
  }
}

struct LayerNormArgs {
  explicit LayerNormArgs(Span<EValue*> args)
      : input{args[0]->to_tensor(), "input"},
        normalized_shape(args[1]->to_int_list()),
        weight{args[2]->to_optional_tensor(), "weight"},
        bias{args[3]->to_optional_tensor(), "bias"},
        eps(args[4]->to_double()),
        out{args[5]->to_tensor(), "out0"},
        mean{args[6]->to_tensor(), "out1"},
        rstd{args[7]->to_tensor(), "out2"} {}
  NamedTensor input;
  Span<const int64_t> normalized_shape;
  NamedTensor weight;  // Undefined: none.
  NamedTensor bias;
  double eps;
  NamedTensor out;
  NamedTensor mean;
  NamedTensor rstd;
};

// What the program fixes: normalized_shape against the input's rank and
// the parameters' shapes, the dtypes. Checked at load by prepare, and on
// every call by the reference eval; sets the parameters' dtype.
Status check_layer_norm_call(const LayerNormArgs& a, ScalarType* param_type) {
  const Tensor& in = a.input.tensor;
  char shape[128];
  char norm[128];
  SizesType norm_sizes[kMaxTensorDim];
  TL_CHECK_OR_RETURN(!a.normalized_shape.empty() && a.normalized_shape.size() <= in.dim(),
                     Error::kInvalidArgument,
                     "argument 'normalized_shape' has %zu dimensions, expected 1 to %zu (the "
                     "rank of argument 'input')",
                     a.normalized_shape.size(), in.dim());
  TL_RETURN_IF_ERROR(to_sizes(a.normalized_shape, "argument 'normalized_shape'", norm_sizes));
  for (const NamedTensor* p : {&a.weight, &a.bias}) {
    if (!p->tensor.defined()) continue;
    TL_CHECK_OR_RETURN(same_shape(p->tensor.sizes(), a.normalized_shape), Error::kInvalidArgument,
                       "argument '%s' has shape %s, expected %s (argument 'normalized_shape')",
                       p->name, format_sizes(p->tensor.sizes(), shape, sizeof(shape)),
                       format_sizes({norm_sizes, a.normalized_shape.size()}, norm, sizeof(norm)));
  }
  const NamedTensor params[] = {a.weight, a.bias};
  TL_RETURN_IF_ERROR(check_norm_dtypes(a.input, params, param_type));
  TL_RETURN_IF_ERROR(check_same_dtype(a.out, in.scalar_type(), "input"));
  TL_RETURN_IF_ERROR(check_same_dtype(a.mean, *param_type, "the parameters"));
  return check_same_dtype(a.rstd, *param_type, "the parameters");
}

// The input's trailing shape of this run, the resizes and the
// normalization; after check_layer_norm_call, for input dtype T and
// parameter dtype P.
template <typename T, typename P>
void layer_norm_shaped(KernelContext& ctx, Span<EValue*> args) {
  const LayerNormArgs a(args);
  const Tensor& in = a.input.tensor;
  char shape[128];
  char norm[128];
  SizesType norm_sizes[kMaxTensorDim];
  const size_t lead_dims = in.dim() - a.normalized_shape.size();
  const Span<const SizesType> trailing(in.sizes().data() + lead_dims, a.normalized_shape.size());
  if (!same_shape(trailing, a.normalized_shape)) {
    TL_KERNEL_RETURN_IF_ERROR(
        ctx, to_sizes(a.normalized_shape, "argument 'normalized_shape'", norm_sizes));
    TL_KERNEL_CHECK(ctx, false, Error::kInvalidArgument,
                    "argument 'input' has shape %s, expected [*, %s to match argument "
                    "'normalized_shape'",
                    format_sizes(in.sizes(), shape, sizeof(shape)),
                    // "[4, 5]" without its '[': "expected [*, 4, 5]".
                    format_sizes({norm_sizes, a.normalized_shape.size()}, norm, sizeof(norm)) + 1);
  }
  for (const NamedTensor* p : {&a.weight, &a.bias}) {
    if (p->tensor.defined()) TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(*p));
  }
  SizesType stat_sizes[kMaxTensorDim];
  for (size_t d = 0; d < in.dim(); ++d) stat_sizes[d] = d < lead_dims ? in.size(d) : 1;
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(a.out, in.sizes()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(a.mean, {stat_sizes, in.dim()}));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(a.rstd, {stat_sizes, in.dim()}));
  for (const NamedTensor* t : {&a.input, &a.out, &a.mean, &a.rstd}) {
    TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(*t));
  }
  if (a.mean.tensor.numel() == 0) return;
  layer_norm<T, P>(in, lead_dims, a.weight.tensor, a.bias.tensor, a.eps, a.out.tensor,
                   a.mean.tensor, a.rstd.tensor);
}

}  // namespace

void native_layer_norm_out(KernelContext& ctx, Span<EValue*> args) {
  ScalarType param_type = ScalarType::kFloat;  // Set by check_norm_dtypes.
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_layer_norm_call(LayerNormArgs(args), &param_type));
  TL_SWITCH_NORM_TYPES(args[0]->to_tensor().scalar_type(), param_type, ctx, T, P,
                       [&] { layer_norm_shaped<T, P>(ctx, args); });
}

// Shapes of the parameters, normalized_shape and the dtypes are the
// program's: checked at load, with the loop for the dtypes picked there.
Status native_layer_norm_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  ScalarType param_type = ScalarType::kFloat;
  TL_RETURN_IF_ERROR(check_layer_norm_call(LayerNormArgs(args), &param_type));
  const ScalarType in = args[0]->to_tensor().scalar_type();
  visit_float_type(in, [&](auto tag) {
    using T = typename decltype(tag)::type;
    call->eval = param_type == in ? &layer_norm_shaped<T, T> : &layer_norm_shaped<T, float>;
  });
  return Error::kOk;
}

}  // namespace torchlight::portable
