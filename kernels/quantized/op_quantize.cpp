// quantized_decomposed::quantize_per_tensor.out / .Tensor_out,
// quantize_per_channel.out and quantize_per_token.out: float -> integer with
// torch's arithmetic (torch.ao.quantization.fx._decomposed):
//   per tensor:  clamp(round(x * float(1/scale)) + zero_point, qmin, qmax)   in float32
//   per channel: clamp(round(x * (1/scales[c])) + zero_points[c], ...)       in the scales' dtype
//   per token:   clamp(round(x * (1/scales[t]) + zero_points[t]), ...)       (zero point before rounding)
// round is round-half-to-even; float16/bfloat16 inputs are read as float32.
// Scales must be finite and > 0 (torch divides by them; 0 raises there).
#include "kernels/quantized/quantized_ops.h"

#include "kernels/quantized/quant_common.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/schemas/op_schemas.h"

namespace torchlight::quantized {
namespace {

struct QuantRange {
  int64_t quant_min;
  int64_t quant_max;
  ScalarType dtype = ScalarType::kFloat;
};

// Arguments every quantize op shares: input, out, the range and dtype.
// The checks prepare runs at load and eval repeats (all O(1)).
Status check_quantize_common(const NamedTensor& input, const NamedTensor& out,
                             const EValue& quant_min, const EValue& quant_max,
                             const EValue& dtype_arg, QuantRange* range) {
  TL_RETURN_IF_ERROR(scalar_type_arg(dtype_arg, "dtype", &range->dtype));
  range->quant_min = quant_min.to_int();
  range->quant_max = quant_max.to_int();
  TL_RETURN_IF_ERROR(check_quant_range(range->quant_min, range->quant_max, range->dtype));
  TL_CHECK_OR_RETURN(visit_quant_float_input(input.tensor.scalar_type(), [](auto) {}),
                     Error::kInvalidType, "argument 'input' has dtype %s, expected %s",
                     to_string(input.tensor.scalar_type()), kQuantFloatInputNames);
  return check_dtype(out, range->dtype);
}

Status resize_like(const NamedTensor& out, const Tensor& input) {
  return portable::resize_tensor(out, input.sizes());
}

// 2^22 and 1.5 * 2^23: for |v| <= 2^22, (v + kMagic) - kMagic is v rounded
// to the nearest integer, ties to even (the float spacing there is 1), and
// unlike nearbyint it vectorises with plain SSE2.
constexpr float kRoundLimit = 4194304.0f;
constexpr float kRoundMagic = 12582912.0f;
constexpr int64_t kFastRange = int64_t{1} << 21;

// One scale and zero point over `n` elements: the float32 arithmetic of the
// per-tensor reference.
template <typename In, typename Q>
void quantize_run(const In* x, Q* out, int64_t n, float inv_scale, int64_t zero_point,
                  const QuantRange& range) {
  const float zp = static_cast<float>(zero_point);
  const float qmin = static_cast<float>(range.quant_min);
  const float qmax = static_cast<float>(range.quant_max);
  const bool fast = zero_point >= -kFastRange && zero_point <= kFastRange &&
                    range.quant_min >= -kFastRange && range.quant_max <= kFastRange;
  if (fast) {
    // Clamping v to +-2^22 first changes nothing: those values clamp to the
    // range anyway. NaN survives both clamps and becomes 0.
    for (int64_t i = 0; i < n; ++i) {
      float v = static_cast<float>(x[i]) * inv_scale;
      v = v < -kRoundLimit ? -kRoundLimit : v;
      v = kRoundLimit < v ? kRoundLimit : v;
      float r = ((v + kRoundMagic) - kRoundMagic) + zp;
      r = r < qmin ? qmin : r;
      r = qmax < r ? qmax : r;
      r = r == r ? r : 0.0f;
      out[i] = static_cast<Q>(static_cast<int32_t>(r));
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const float v = static_cast<float>(x[i]) * inv_scale;
    out[i] = clamp_to_quant<Q>(std::nearbyint(v) + zp, qmin, qmax);
  }
}

template <typename Fn>
Status dispatch_in_q(ScalarType in, ScalarType q, Fn&& fn) {
  bool done = false;
  visit_quant_float_input(in, [&](auto in_tag) {
    visit_quant_int_type(q, [&](auto q_tag) {
      fn(in_tag, q_tag);
      done = true;
    });
  });
  TL_CHECK_OR_RETURN(done, Error::kInvalidType, "unsupported dtypes %s -> %s", to_string(in),
                     to_string(q));
  return Error::kOk;
}

Status quantize_per_tensor_impl(const Tensor& input, double scale, int64_t zero_point,
                                const QuantRange& range, const Tensor& out) {
  // torch: inv_scale = 1.0 / scale in double, then the float32 multiply.
  const float inv_scale = static_cast<float>(1.0 / scale);
  return dispatch_in_q(input.scalar_type(), range.dtype, [&](auto in_tag, auto q_tag) {
    using In = typename decltype(in_tag)::type;
    using Q = typename decltype(q_tag)::type;
    quantize_run<In, Q>(input.const_data_ptr<In>(), out.mutable_data_ptr<Q>(), input.numel(),
                        inv_scale, zero_point, range);
  });
}

// --- quantize_per_tensor.out(input, float scale, int zero_point, quant_min, quant_max, dtype, *, out)

Status check_per_tensor(Span<EValue*> args, QuantRange* range) {
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor out{args[6]->to_tensor(), "out"};
  TL_RETURN_IF_ERROR(check_quantize_common(input, out, *args[3], *args[4], *args[5], range));
  return check_scale_value(args[1]->to_double(), "scale");
}

}  // namespace

namespace {

// The eval prepare installs: everything but the sizes and data pointers was
// checked at load (dtypes, range, scale, dim orders), so it only resizes and
// computes. The arguments are the program's constants.
void quantize_per_tensor_prepared(KernelContext& ctx, Span<EValue*> args) {
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor out{args[6]->to_tensor(), "out"};
  const QuantRange range{args[3]->to_int(), args[4]->to_int(),
                         static_cast<ScalarType>(args[5]->to_int())};
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_like(out, input.tensor));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_has_data(input));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_has_data(out));
  TL_KERNEL_RETURN_IF_ERROR(ctx, quantize_per_tensor_impl(input.tensor, args[1]->to_double(),
                                                          args[2]->to_int(), range, out.tensor));
  set_return(args, 7, *args[6]);
}

}  // namespace

Status quantize_per_tensor_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  QuantRange range;
  TL_RETURN_IF_ERROR(check_per_tensor(args, &range));
  if (!is_contiguous_dim_order(args[0]->to_tensor().dim_order()) ||
      !is_contiguous_dim_order(args[6]->to_tensor().dim_order())) {
    return Error::kOk;  // The reference eval reports it, naming the argument.
  }
  call->eval = &quantize_per_tensor_prepared;
  return Error::kOk;
}

void quantize_per_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  QuantRange range;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_per_tensor(args, &range));
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor out{args[6]->to_tensor(), "out"};
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_like(out, input.tensor));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_contiguous(input));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_contiguous(out));
  TL_KERNEL_RETURN_IF_ERROR(ctx, quantize_per_tensor_impl(input.tensor, args[1]->to_double(),
                                                          args[2]->to_int(), range, out.tensor));
  set_return(args, 7, *args[6]);
}

// --- quantize_per_tensor.Tensor_out: scale and zero_point as one-element tensors.

namespace {

// A one-element scale (float32/float64) and zero point (integer) tensor.
Status read_tensor_qparams(const NamedTensor& scale, const NamedTensor& zero_point,
                           double* scale_value, int64_t* zero_point_value) {
  TL_CHECK_OR_RETURN(visit_scale_type(scale.tensor.scalar_type(), [](auto) {}),
                     Error::kInvalidType, "argument 'scale' has dtype %s, expected float32 or float64",
                     to_string(scale.tensor.scalar_type()));
  TL_CHECK_OR_RETURN(is_zero_point_dtype(zero_point.tensor.scalar_type()), Error::kInvalidType,
                     "argument 'zero_point' has dtype %s, expected an integer dtype",
                     to_string(zero_point.tensor.scalar_type()));
  TL_CHECK_OR_RETURN(scale.tensor.numel() == 1, Error::kInvalidArgument,
                     "argument 'scale' must have one element, got %lld",
                     static_cast<long long>(scale.tensor.numel()));
  TL_CHECK_OR_RETURN(zero_point.tensor.numel() == 1, Error::kInvalidArgument,
                     "argument 'zero_point' must have one element, got %lld",
                     static_cast<long long>(zero_point.tensor.numel()));
  TL_RETURN_IF_ERROR(portable::check_has_data(scale));
  TL_RETURN_IF_ERROR(portable::check_has_data(zero_point));
  *scale_value = load_scale(scale.tensor, 0);
  *zero_point_value = load_int(zero_point.tensor, 0);
  return Error::kOk;
}

Status check_per_tensor_tensor(Span<EValue*> args, QuantRange* range) {
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor out{args[6]->to_tensor(), "out"};
  TL_RETURN_IF_ERROR(check_quantize_common(input, out, *args[3], *args[4], *args[5], range));
  const Tensor scale = args[1]->to_tensor();
  const Tensor zero_point = args[2]->to_tensor();
  TL_CHECK_OR_RETURN(visit_scale_type(scale.scalar_type(), [](auto) {}), Error::kInvalidType,
                     "argument 'scale' has dtype %s, expected float32 or float64",
                     to_string(scale.scalar_type()));
  TL_CHECK_OR_RETURN(is_zero_point_dtype(zero_point.scalar_type()), Error::kInvalidType,
                     "argument 'zero_point' has dtype %s, expected an integer dtype",
                     to_string(zero_point.scalar_type()));
  return Error::kOk;
}

}  // namespace

Status quantize_per_tensor_tensor_prepare(PrepareContext&, Span<EValue*> args, PreparedCall*) {
  QuantRange range;
  return check_per_tensor_tensor(args, &range);
}

void quantize_per_tensor_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  QuantRange range;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_per_tensor_tensor(args, &range));
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor out{args[6]->to_tensor(), "out"};
  double scale = 0;
  int64_t zero_point = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, read_tensor_qparams({args[1]->to_tensor(), "scale"},
                                                     {args[2]->to_tensor(), "zero_point"}, &scale,
                                                     &zero_point));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_scale_value(scale, "scale"));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_like(out, input.tensor));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_contiguous(input));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_contiguous(out));
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, quantize_per_tensor_impl(input.tensor, scale, zero_point, range, out.tensor));
  set_return(args, 7, *args[6]);
}

// --- quantize_per_channel.out(input, scales, zero_points, int axis, quant_min, quant_max, dtype, *, out)

namespace {

// Per-channel (and per-token) parameter tensors: 1 value per channel.
Status check_channel_params(const NamedTensor& scales, const NamedTensor& zero_points,
                            int64_t channels, const char* what) {
  TL_CHECK_OR_RETURN(visit_scale_type(scales.tensor.scalar_type(), [](auto) {}),
                     Error::kInvalidType, "argument '%s' has dtype %s, expected float32 or float64",
                     scales.name, to_string(scales.tensor.scalar_type()));
  TL_CHECK_OR_RETURN(scales.tensor.numel() == channels, Error::kInvalidArgument,
                     "argument '%s' has %lld elements, expected %lld (%s)", scales.name,
                     static_cast<long long>(scales.tensor.numel()),
                     static_cast<long long>(channels), what);
  TL_RETURN_IF_ERROR(check_contiguous(scales));
  if (zero_points.tensor.defined()) {
    TL_CHECK_OR_RETURN(is_zero_point_dtype(zero_points.tensor.scalar_type()), Error::kInvalidType,
                       "argument '%s' has dtype %s, expected an integer dtype", zero_points.name,
                       to_string(zero_points.tensor.scalar_type()));
    TL_CHECK_OR_RETURN(zero_points.tensor.numel() == channels, Error::kInvalidArgument,
                       "argument '%s' has %lld elements, expected %lld (%s)", zero_points.name,
                       static_cast<long long>(zero_points.tensor.numel()),
                       static_cast<long long>(channels), what);
    TL_RETURN_IF_ERROR(check_contiguous(zero_points));
  }
  return Error::kOk;
}

Status check_scales_positive(const NamedTensor& scales) {
  for (int64_t i = 0; i < scales.tensor.numel(); ++i) {
    TL_RETURN_IF_ERROR(check_scale_value(load_scale(scales.tensor, i), scales.name, i));
  }
  return Error::kOk;
}

/// [outer, channels, inner] of `t` around dimension `axis`.
void split_at_axis(const Tensor& t, size_t axis, int64_t* outer, int64_t* channels,
                   int64_t* inner) {
  *outer = 1;
  *inner = 1;
  for (size_t d = 0; d < axis; ++d) *outer *= t.size(d);
  *channels = t.size(axis);
  for (size_t d = axis + 1; d < t.dim(); ++d) *inner *= t.size(d);
}

// `inner` elements sharing one channel's parameters, in the scales' dtype C.
// kZeroPointFirst: per token (zero point added before rounding).
template <typename C, bool kZeroPointFirst, typename In, typename Q>
void quantize_block(const In* x, Q* out, int64_t n, C inv_scale, int64_t zero_point,
                    const QuantRange& range) {
  const C zp = static_cast<C>(zero_point);
  const C qmin = static_cast<C>(range.quant_min);
  const C qmax = static_cast<C>(range.quant_max);
  for (int64_t i = 0; i < n; ++i) {
    const C v = static_cast<C>(static_cast<float>(x[i])) * inv_scale;
    const C r = kZeroPointFirst ? std::nearbyint(v + zp) : std::nearbyint(v) + zp;
    out[i] = clamp_to_quant<Q>(r, qmin, qmax);
  }
}

template <bool kZeroPointFirst>
Status quantize_channels(const Tensor& input, const Tensor& scales, const Tensor& zero_points,
                         int64_t outer, int64_t channels, int64_t inner, const QuantRange& range,
                         const Tensor& out) {
  return dispatch_in_q(input.scalar_type(), range.dtype, [&](auto in_tag, auto q_tag) {
    using In = typename decltype(in_tag)::type;
    using Q = typename decltype(q_tag)::type;
    const In* x = input.const_data_ptr<In>();
    Q* y = out.mutable_data_ptr<Q>();
    visit_scale_type(scales.scalar_type(), [&](auto s_tag) {
      using S = typename decltype(s_tag)::type;
      const S* s = scales.const_data_ptr<S>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t c = 0; c < channels; ++c) {
          const S inv = S(1) / s[c];  // torch: 1.0 / scales, in the scales' dtype.
          const int64_t offset = (o * channels + c) * inner;
          quantize_block<S, kZeroPointFirst>(x + offset, y + offset, inner, inv,
                                             load_int(zero_points, c), range);
        }
      }
    });
  });
}

Status check_per_channel(Span<EValue*> args, QuantRange* range, size_t* axis) {
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor out{args[7]->to_tensor(), "out"};
  TL_RETURN_IF_ERROR(check_quantize_common(input, out, *args[4], *args[5], *args[6], range));
  return channel_axis(input, args[3]->to_int(), axis);
}

}  // namespace

Status quantize_per_channel_prepare(PrepareContext&, Span<EValue*> args, PreparedCall*) {
  QuantRange range;
  size_t axis = 0;
  return check_per_channel(args, &range, &axis);
}

void quantize_per_channel_out(KernelContext& ctx, Span<EValue*> args) {
  QuantRange range;
  size_t axis = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_per_channel(args, &range, &axis));
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor scales{args[1]->to_tensor(), "scales"};
  const NamedTensor zero_points{args[2]->to_tensor(), "zero_points"};
  const NamedTensor out{args[7]->to_tensor(), "out"};
  int64_t outer = 0, channels = 0, inner = 0;
  split_at_axis(input.tensor, axis, &outer, &channels, &inner);
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_channel_params(scales, zero_points, channels,
                                                      "one per channel along 'axis'"));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_scales_positive(scales));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_like(out, input.tensor));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_contiguous(input));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_contiguous(out));
  TL_KERNEL_RETURN_IF_ERROR(ctx, quantize_channels<false>(input.tensor, scales.tensor,
                                                          zero_points.tensor, outer, channels,
                                                          inner, range, out.tensor));
  set_return(args, 8, *args[7]);
}

// --- quantize_per_token.out(input, scales, zero_points, quant_min, quant_max, dtype, *, out)

namespace {

Status check_per_token(Span<EValue*> args, QuantRange* range) {
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor out{args[6]->to_tensor(), "out"};
  TL_RETURN_IF_ERROR(check_quantize_common(input, out, *args[3], *args[4], *args[5], range));
  TL_CHECK_OR_RETURN(input.tensor.dim() >= 1, Error::kInvalidArgument,
                     "argument 'input' must have at least one dimension (the token's values)");
  return Error::kOk;
}

}  // namespace

Status quantize_per_token_prepare(PrepareContext&, Span<EValue*> args, PreparedCall*) {
  QuantRange range;
  return check_per_token(args, &range);
}

void quantize_per_token_out(KernelContext& ctx, Span<EValue*> args) {
  QuantRange range;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_per_token(args, &range));
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor scales{args[1]->to_tensor(), "scales"};
  const NamedTensor zero_points{args[2]->to_tensor(), "zero_points"};
  const NamedTensor out{args[6]->to_tensor(), "out"};
  int64_t outer = 0, tokens = 0, inner = 0;
  split_at_axis(input.tensor, input.tensor.dim() - 1, &outer, &tokens, &inner);
  tokens = outer;  // Every dimension but the last indexes tokens.
  inner = input.tensor.size(input.tensor.dim() - 1);
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, check_channel_params(scales, zero_points, tokens, "one per token"));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_scales_positive(scales));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_like(out, input.tensor));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_contiguous(input));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_contiguous(out));
  TL_KERNEL_RETURN_IF_ERROR(ctx, quantize_channels<true>(input.tensor, scales.tensor,
                                                         zero_points.tensor, 1, tokens, inner,
                                                         range, out.tensor));
  set_return(args, 7, *args[6]);
}

}  // namespace torchlight::quantized
