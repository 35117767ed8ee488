// quantized_decomposed::mixed_mm.out and mixed_linear.out: float (or
// float16) activations times int8 weights with float scales, as upstream's
// kernels define them (torch has no reference; the tests dequantize the
// weight in PyTorch and multiply):
//   mixed_mm:     out[m, n] = sum_k x[m, k] * w[k, n] * scales[k]       (w [K, N], scales [K])
//   mixed_linear: out[m, n] = sum_k x[m, k] * w[n, k] * scales[n, k / g] (w [N, K], scales [N] or
//                 [N, G] with g = ceil(K / G))
// Sums accumulate in float32. Zero points are rejected, as upstream does
// ("not supported yet").
#include "kernels/quantized/quant_common.h"
#include "kernels/quantized/quantized_ops.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/schemas/op_schemas.h"

namespace torchlight::quantized {
namespace {

Status check_common(const NamedTensor& input, const NamedTensor& weight, const NamedTensor& scales,
                    const EValue& zero_points) {
  const ScalarType in = input.tensor.scalar_type();
  TL_CHECK_OR_RETURN(in == ScalarType::kFloat || in == ScalarType::kHalf, Error::kInvalidType,
                     "argument 'input' has dtype %s, expected float32 or float16", to_string(in));
  TL_RETURN_IF_ERROR(check_dtype(weight, ScalarType::kChar));
  TL_CHECK_OR_RETURN(scales.tensor.scalar_type() == in, Error::kInvalidType,
                     "argument 'weight_scales' has dtype %s, expected %s (the dtype of 'input')",
                     to_string(scales.tensor.scalar_type()), to_string(in));
  TL_CHECK_OR_RETURN(!zero_points.is_tensor() || !zero_points.to_tensor().defined(),
                     Error::kInvalidArgument,
                     "argument 'weight_zero_points' must be None (zero points are not supported, "
                     "as upstream)");
  return Error::kOk;
}

template <typename T>
float load_f(const T* p, int64_t i) {
  return static_cast<float>(p[i]);
}

// 8 partial sums so the loop vectorises without reassociation.
template <typename T>
float dot_int8(const T* x, const int8_t* w, int64_t n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    for (int l = 0; l < 8; ++l) acc[l] += static_cast<float>(x[k + l]) * static_cast<float>(w[k + l]);
  }
  float sum = 0;
  for (; k < n; ++k) sum += static_cast<float>(x[k]) * static_cast<float>(w[k]);
  return sum + ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

Status check_mm(Span<EValue*> args) {
  const NamedTensor input{args[0]->to_tensor(), "input"};
  TL_RETURN_IF_ERROR(check_common(input, {args[1]->to_tensor(), "weight"},
                                  {args[2]->to_tensor(), "weight_scales"}, *args[3]));
  return check_dtype({args[4]->to_tensor(), "out"}, input.tensor.scalar_type());
}

}  // namespace

Status mixed_mm_prepare(PrepareContext&, Span<EValue*> args, PreparedCall*) { return check_mm(args); }

void mixed_mm_out(KernelContext& ctx, Span<EValue*> args) {
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_mm(args));
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor weight{args[1]->to_tensor(), "weight"};
  const NamedTensor scales{args[2]->to_tensor(), "weight_scales"};
  const NamedTensor out{args[4]->to_tensor(), "out"};
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_rank(input, 2, "a matrix [M, K]"));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_rank(weight, 2, "a matrix [K, N]"));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_rank(scales, 1, "a vector [K]"));
  const int64_t m = input.tensor.size(0), k = input.tensor.size(1), n = weight.tensor.size(1);
  TL_KERNEL_CHECK(ctx, weight.tensor.size(0) == k, Error::kInvalidArgument,
                  "argument 'weight' has %lld rows, expected %lld (the columns of 'input')",
                  static_cast<long long>(weight.tensor.size(0)), static_cast<long long>(k));
  TL_KERNEL_CHECK(ctx, scales.tensor.size(0) == k, Error::kInvalidArgument,
                  "argument 'weight_scales' has %lld elements, expected %lld (the rows of 'weight')",
                  static_cast<long long>(scales.tensor.size(0)), static_cast<long long>(k));
  const SizesType sizes[2] = {static_cast<SizesType>(m), static_cast<SizesType>(n)};
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::resize_tensor(out, {sizes, 2}));
  for (const NamedTensor* t : {&input, &weight, &scales, &out}) {
    TL_KERNEL_RETURN_IF_ERROR(ctx, check_contiguous(*t));
  }
  auto compute = [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = input.tensor.const_data_ptr<T>();
    const int8_t* w = weight.tensor.const_data_ptr<int8_t>();
    const T* s = scales.tensor.const_data_ptr<T>();
    T* y = out.tensor.mutable_data_ptr<T>();
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        float sum = 0;
        for (int64_t kk = 0; kk < k; ++kk) {
          sum += load_f(x, i * k + kk) * static_cast<float>(w[kk * n + j]) * load_f(s, kk);
        }
        y[i * n + j] = static_cast<T>(sum);
      }
    }
  };
  if (input.tensor.scalar_type() == ScalarType::kFloat) {
    compute(TypeTag<float>{});
  } else {
    compute(TypeTag<Half>{});
  }
  set_return(args, 5, *args[4]);
}

namespace {

Status check_linear(Span<EValue*> args) {
  const NamedTensor input{args[0]->to_tensor(), "input"};
  TL_RETURN_IF_ERROR(check_common(input, {args[1]->to_tensor(), "weight"},
                                  {args[2]->to_tensor(), "weight_scales"}, *args[3]));
  const NamedTensor out{args[5]->to_tensor(), "out"};
  const ScalarType o = out.tensor.scalar_type();
  if (!args[4]->is_none()) {
    ScalarType dtype = ScalarType::kFloat;
    TL_RETURN_IF_ERROR(scalar_type_arg(*args[4], "dtype", &dtype));
    TL_CHECK_OR_RETURN(dtype == ScalarType::kFloat || dtype == ScalarType::kHalf,
                       Error::kInvalidType, "argument 'dtype' is %s, expected float32 or float16",
                       to_string(dtype));
    return check_dtype(out, dtype);
  }
  TL_CHECK_OR_RETURN(o == ScalarType::kFloat || o == ScalarType::kHalf, Error::kInvalidType,
                     "argument 'out' has dtype %s, expected float32 or float16", to_string(o));
  return Error::kOk;
}

}  // namespace

Status mixed_linear_prepare(PrepareContext&, Span<EValue*> args, PreparedCall*) {
  return check_linear(args);
}

void mixed_linear_out(KernelContext& ctx, Span<EValue*> args) {
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_linear(args));
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor weight{args[1]->to_tensor(), "weight"};
  const NamedTensor scales{args[2]->to_tensor(), "weight_scales"};
  const NamedTensor out{args[5]->to_tensor(), "out"};
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_rank(input, 2, "a matrix [M, K]"));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_rank(weight, 2, "a matrix [N, K]"));
  const int64_t m = input.tensor.size(0), k = input.tensor.size(1), n = weight.tensor.size(0);
  TL_KERNEL_CHECK(ctx, weight.tensor.size(1) == k, Error::kInvalidArgument,
                  "argument 'weight' has %lld columns, expected %lld (the columns of 'input')",
                  static_cast<long long>(weight.tensor.size(1)), static_cast<long long>(k));
  const size_t sdim = scales.tensor.dim();
  TL_KERNEL_CHECK(ctx, (sdim == 1 || sdim == 2) && scales.tensor.size(0) == n,
                  Error::kInvalidArgument,
                  "argument 'weight_scales' must be [N] or [N, groups] with N = %lld",
                  static_cast<long long>(n));
  const int64_t groups = sdim == 2 ? scales.tensor.size(1) : 1;
  TL_KERNEL_CHECK(ctx, groups > 0, Error::kInvalidArgument,
                  "argument 'weight_scales' has 0 groups per row");
  const int64_t group = k == 0 ? 1 : (k + groups - 1) / groups;
  // Every column's group must have a scale: ceil(K / group) <= groups.
  TL_KERNEL_CHECK(ctx, k == 0 || (k + group - 1) / group <= groups, Error::kInvalidArgument,
                  "argument 'weight_scales' has %lld groups, too few for %lld columns",
                  static_cast<long long>(groups), static_cast<long long>(k));
  const SizesType sizes[2] = {static_cast<SizesType>(m), static_cast<SizesType>(n)};
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::resize_tensor(out, {sizes, 2}));
  for (const NamedTensor* t : {&input, &weight, &scales, &out}) {
    TL_KERNEL_RETURN_IF_ERROR(ctx, check_contiguous(*t));
  }
  auto compute = [&](auto in_tag, auto out_tag) {
    using T = typename decltype(in_tag)::type;
    using O = typename decltype(out_tag)::type;
    const T* x = input.tensor.const_data_ptr<T>();
    const int8_t* w = weight.tensor.const_data_ptr<int8_t>();
    const T* s = scales.tensor.const_data_ptr<T>();
    O* y = out.tensor.mutable_data_ptr<O>();
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        float sum = 0;
        for (int64_t g = 0; g * group < k; ++g) {
          const int64_t start = g * group;
          const int64_t len = k - start < group ? k - start : group;
          sum += dot_int8(x + i * k + start, w + j * k + start, len) *
                 static_cast<float>(s[j * groups + g]);
        }
        y[i * n + j] = static_cast<O>(sum);
      }
    }
  };
  const bool half_in = input.tensor.scalar_type() == ScalarType::kHalf;
  const bool half_out = out.tensor.scalar_type() == ScalarType::kHalf;
  if (!half_in && !half_out) compute(TypeTag<float>{}, TypeTag<float>{});
  if (!half_in && half_out) compute(TypeTag<float>{}, TypeTag<Half>{});
  if (half_in && !half_out) compute(TypeTag<Half>{}, TypeTag<float>{});
  if (half_in && half_out) compute(TypeTag<Half>{}, TypeTag<Half>{});
  set_return(args, 6, *args[5]);
}

}  // namespace torchlight::quantized
