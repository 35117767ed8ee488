// quantized_decomposed::dequantize_per_tensor.out / .Tensor_out,
// dequantize_per_channel.out, dequantize_per_token.out and
// dequantize_per_channel_group.out: integer -> float with torch's arithmetic
// (torch.ao.quantization.fx._decomposed), each step rounded to the dtype
// torch gives it:
//   per tensor:  (q.to(out) - zero_point) * scale                 in the out dtype
//   per channel / per token: ((q - zp[c]) * scales[c]).to(out)    (q - zp in int64, * in the scales' dtype)
//   per channel group: (q - zp[g]) * scales[g] over groups of `group_size`
//                   elements of each row, in the scales' dtype, then .to(out)
#include "kernels/quantized/quantized_ops.h"

#include "kernels/quantized/dequant_group.h"
#include "kernels/quantized/quant_common.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/schemas/op_schemas.h"

namespace torchlight::quantized {
namespace {

struct DequantArgs {
  int64_t quant_min;
  int64_t quant_max;
  ScalarType dtype;      // The input's dtype, as the program states it.
  ScalarType out_dtype = ScalarType::kFloat;  // The result's dtype.
};

// input/out dtypes and the range; all O(1), so prepare and eval both run it.
Status check_dequantize_common(const NamedTensor& input, const NamedTensor& out,
                               const EValue& quant_min, const EValue& quant_max,
                               const EValue& dtype_arg, const EValue* out_dtype_arg,
                               const char* out_dtype_name, DequantArgs* a) {
  TL_RETURN_IF_ERROR(scalar_type_arg(dtype_arg, "dtype", &a->dtype));
  a->quant_min = quant_min.to_int();
  a->quant_max = quant_max.to_int();
  TL_RETURN_IF_ERROR(check_quant_range(a->quant_min, a->quant_max, a->dtype));
  TL_CHECK_OR_RETURN(input.tensor.scalar_type() == a->dtype, Error::kInvalidType,
                     "argument 'input' has dtype %s, expected %s (argument 'dtype')",
                     to_string(input.tensor.scalar_type()), to_string(a->dtype));
  a->out_dtype = ScalarType::kFloat;
  if (out_dtype_arg != nullptr) {
    TL_RETURN_IF_ERROR(
        optional_scalar_type_arg(*out_dtype_arg, out_dtype_name, ScalarType::kFloat, &a->out_dtype));
  }
  TL_CHECK_OR_RETURN(visit_float_result(a->out_dtype, [](auto) {}), Error::kInvalidType,
                     "argument '%s' is %s, expected %s", out_dtype_name, to_string(a->out_dtype),
                     kFloatResultNames);
  return check_dtype(out, a->out_dtype);
}

template <typename Q, typename Out>
void dequantize_run(const Q* q, Out* out, int64_t n, double scale, int64_t zero_point) {
  if constexpr (std::is_same_v<Out, float>) {
    // Vectorises: the float32 steps of the reference, (float(q) - zp) * scale.
    const float zp = static_cast<float>(zero_point);
    const float s = static_cast<float>(scale);
    for (int64_t i = 0; i < n; ++i) out[i] = (static_cast<float>(q[i]) - zp) * s;
  } else {
    // torch: q.to(Out) (rounded), minus zero_point (rounded), times scale
    // (rounded); the Python scalars enter as Out's compute type.
    using Op = opmath_of<Out>;
    const double zp = static_cast<Op>(zero_point);
    const double s = static_cast<Op>(scale);
    for (int64_t i = 0; i < n; ++i) {
      const double a = round_to<Out>(static_cast<double>(q[i]));
      const double t = round_to<Out>(a - zp);
      out[i] = static_cast<Out>(static_cast<Op>(round_to<Out>(t * s)));
    }
  }
}

Status dequantize_per_tensor_impl(const Tensor& input, double scale, int64_t zero_point,
                                  const Tensor& out) {
  bool done = false;
  visit_quant_int_type(input.scalar_type(), [&](auto q_tag) {
    visit_float_result(out.scalar_type(), [&](auto out_tag) {
      using Q = typename decltype(q_tag)::type;
      using Out = typename decltype(out_tag)::type;
      dequantize_run<Q, Out>(input.const_data_ptr<Q>(), out.mutable_data_ptr<Out>(),
                             input.numel(), scale, zero_point);
      done = true;
    });
  });
  TL_CHECK_OR_RETURN(done, Error::kInvalidType, "unsupported dtypes %s -> %s",
                     to_string(input.scalar_type()), to_string(out.scalar_type()));
  return Error::kOk;
}

Status check_per_tensor(Span<EValue*> args, DequantArgs* a) {
  return check_dequantize_common({args[0]->to_tensor(), "input"}, {args[7]->to_tensor(), "out"},
                                 *args[3], *args[4], *args[5], args[6], "out_dtype", a);
}

Status check_per_tensor_tensor(Span<EValue*> args, DequantArgs* a) {
  TL_RETURN_IF_ERROR(check_dequantize_common({args[0]->to_tensor(), "input"},
                                             {args[7]->to_tensor(), "out"}, *args[3], *args[4],
                                             *args[5], args[6], "out_dtype", a));
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

namespace {

// The eval prepare installs: dtypes, range and dim orders were checked at
// load, so it only resizes and computes.
void dequantize_per_tensor_prepared(KernelContext& ctx, Span<EValue*> args) {
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor out{args[7]->to_tensor(), "out"};
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::resize_tensor(out, input.tensor.sizes()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_has_data(input));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_has_data(out));
  TL_KERNEL_RETURN_IF_ERROR(ctx, dequantize_per_tensor_impl(input.tensor, args[1]->to_double(),
                                                            args[2]->to_int(), out.tensor));
  set_return(args, 8, *args[7]);
}

}  // namespace

Status dequantize_per_tensor_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  DequantArgs a;
  TL_RETURN_IF_ERROR(check_per_tensor(args, &a));
  if (is_contiguous_dim_order(args[0]->to_tensor().dim_order()) &&
      is_contiguous_dim_order(args[7]->to_tensor().dim_order())) {
    call->eval = &dequantize_per_tensor_prepared;
  }
  return Error::kOk;
}

void dequantize_per_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  DequantArgs a;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_per_tensor(args, &a));
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor out{args[7]->to_tensor(), "out"};
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::resize_tensor(out, input.tensor.sizes()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_contiguous(input));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_contiguous(out));
  TL_KERNEL_RETURN_IF_ERROR(ctx, dequantize_per_tensor_impl(input.tensor, args[1]->to_double(),
                                                            args[2]->to_int(), out.tensor));
  set_return(args, 8, *args[7]);
}

Status dequantize_per_tensor_tensor_prepare(PrepareContext&, Span<EValue*> args, PreparedCall*) {
  DequantArgs a;
  return check_per_tensor_tensor(args, &a);
}

void dequantize_per_tensor_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  DequantArgs a;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_per_tensor_tensor(args, &a));
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor scale{args[1]->to_tensor(), "scale"};
  const NamedTensor zero_point{args[2]->to_tensor(), "zero_point"};
  const NamedTensor out{args[7]->to_tensor(), "out"};
  TL_KERNEL_CHECK(ctx, scale.tensor.numel() == 1, Error::kInvalidArgument,
                  "argument 'scale' must have one element, got %lld",
                  static_cast<long long>(scale.tensor.numel()));
  TL_KERNEL_CHECK(ctx, zero_point.tensor.numel() == 1, Error::kInvalidArgument,
                  "argument 'zero_point' must have one element, got %lld",
                  static_cast<long long>(zero_point.tensor.numel()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_has_data(scale));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_has_data(zero_point));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::resize_tensor(out, input.tensor.sizes()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_contiguous(input));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_contiguous(out));
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, dequantize_per_tensor_impl(input.tensor, load_scale(scale.tensor, 0),
                                      load_int(zero_point.tensor, 0), out.tensor));
  set_return(args, 8, *args[7]);
}

// --- per channel and per token: one (scale, zero point) per slice.

namespace {

Status check_slice_params(const NamedTensor& scales, const NamedTensor& zero_points,
                          int64_t count, const char* what) {
  TL_CHECK_OR_RETURN(visit_scale_type(scales.tensor.scalar_type(), [](auto) {}),
                     Error::kInvalidType, "argument '%s' has dtype %s, expected float32 or float64",
                     scales.name, to_string(scales.tensor.scalar_type()));
  TL_CHECK_OR_RETURN(scales.tensor.numel() == count, Error::kInvalidArgument,
                     "argument '%s' has %lld elements, expected %lld (%s)", scales.name,
                     static_cast<long long>(scales.tensor.numel()), static_cast<long long>(count),
                     what);
  TL_RETURN_IF_ERROR(check_contiguous(scales));
  if (zero_points.tensor.defined()) {
    TL_CHECK_OR_RETURN(is_zero_point_dtype(zero_points.tensor.scalar_type()), Error::kInvalidType,
                       "argument '%s' has dtype %s, expected an integer dtype", zero_points.name,
                       to_string(zero_points.tensor.scalar_type()));
    TL_CHECK_OR_RETURN(zero_points.tensor.numel() == count, Error::kInvalidArgument,
                       "argument '%s' has %lld elements, expected %lld (%s)", zero_points.name,
                       static_cast<long long>(zero_points.tensor.numel()),
                       static_cast<long long>(count), what);
    TL_RETURN_IF_ERROR(check_contiguous(zero_points));
  }
  return Error::kOk;
}

// out[o, c, i] = ((q[o, c, i] - zp[c]) * scales[c]).to(Out): the difference
// in int64, the product in the scales' dtype S, then one more rounding.
Status dequantize_slices(const Tensor& input, const Tensor& scales, const Tensor& zero_points,
                         int64_t outer, int64_t count, int64_t inner, const Tensor& out) {
  bool done = false;
  visit_quant_int_type(input.scalar_type(), [&](auto q_tag) {
    visit_float_result(out.scalar_type(), [&](auto out_tag) {
      visit_scale_type(scales.scalar_type(), [&](auto s_tag) {
        using Q = typename decltype(q_tag)::type;
        using Out = typename decltype(out_tag)::type;
        using S = typename decltype(s_tag)::type;
        const Q* q = input.const_data_ptr<Q>();
        const S* s = scales.const_data_ptr<S>();
        Out* y = out.mutable_data_ptr<Out>();
        for (int64_t o = 0; o < outer; ++o) {
          for (int64_t c = 0; c < count; ++c) {
            const int64_t zp = zero_points.defined() ? load_int(zero_points, c) : 0;
            const S sc = s[c];
            const int64_t base = (o * count + c) * inner;
            for (int64_t i = 0; i < inner; ++i) {
              const S v = static_cast<S>(static_cast<int64_t>(q[base + i]) - zp) * sc;
              y[base + i] = static_cast<Out>(static_cast<opmath_of<Out>>(round_to<Out>(v)));
            }
          }
        }
        done = true;
      });
    });
  });
  TL_CHECK_OR_RETURN(done, Error::kInvalidType, "unsupported dtypes %s -> %s",
                     to_string(input.scalar_type()), to_string(out.scalar_type()));
  return Error::kOk;
}

Status check_per_channel(Span<EValue*> args, DequantArgs* a, size_t* axis) {
  const NamedTensor input{args[0]->to_tensor(), "input"};
  TL_RETURN_IF_ERROR(check_dequantize_common(input, {args[8]->to_tensor(), "out"}, *args[4],
                                             *args[5], *args[6], args[7], "out_dtype", a));
  return channel_axis(input, args[3]->to_int(), axis);
}

}  // namespace

Status dequantize_per_channel_prepare(PrepareContext&, Span<EValue*> args, PreparedCall*) {
  DequantArgs a;
  size_t axis = 0;
  return check_per_channel(args, &a, &axis);
}

void dequantize_per_channel_out(KernelContext& ctx, Span<EValue*> args) {
  DequantArgs a;
  size_t axis = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_per_channel(args, &a, &axis));
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor scales{args[1]->to_tensor(), "scales"};
  const NamedTensor zero_points{args[2]->to_optional_tensor(), "zero_points"};
  const NamedTensor out{args[8]->to_tensor(), "out"};
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= input.tensor.size(d);
  for (size_t d = axis + 1; d < input.tensor.dim(); ++d) inner *= input.tensor.size(d);
  const int64_t channels = input.tensor.size(axis);
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_slice_params(scales, zero_points, channels,
                                                    "one per channel along 'axis'"));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::resize_tensor(out, input.tensor.sizes()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_contiguous(input));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_contiguous(out));
  TL_KERNEL_RETURN_IF_ERROR(ctx, dequantize_slices(input.tensor, scales.tensor, zero_points.tensor,
                                                   outer, channels, inner, out.tensor));
  set_return(args, 9, *args[8]);
}

namespace {

Status check_per_token(Span<EValue*> args, DequantArgs* a) {
  const NamedTensor input{args[0]->to_tensor(), "input"};
  TL_RETURN_IF_ERROR(check_dequantize_common(input, {args[7]->to_tensor(), "out"}, *args[3],
                                             *args[4], *args[5], args[6], "output_dtype", a));
  TL_CHECK_OR_RETURN(input.tensor.dim() >= 1, Error::kInvalidArgument,
                     "argument 'input' must have at least one dimension (the token's values)");
  return Error::kOk;
}

}  // namespace

Status dequantize_per_token_prepare(PrepareContext&, Span<EValue*> args, PreparedCall*) {
  DequantArgs a;
  return check_per_token(args, &a);
}

void dequantize_per_token_out(KernelContext& ctx, Span<EValue*> args) {
  DequantArgs a;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_per_token(args, &a));
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor scales{args[1]->to_tensor(), "scales"};
  const NamedTensor zero_points{args[2]->to_tensor(), "zero_points"};
  const NamedTensor out{args[7]->to_tensor(), "out"};
  const int64_t inner = input.tensor.size(input.tensor.dim() - 1);
  int64_t tokens = 1;
  for (size_t d = 0; d + 1 < input.tensor.dim(); ++d) tokens *= input.tensor.size(d);
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_slice_params(scales, zero_points, tokens, "one per token"));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::resize_tensor(out, input.tensor.sizes()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_contiguous(input));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_contiguous(out));
  TL_KERNEL_RETURN_IF_ERROR(ctx, dequantize_slices(input.tensor, scales.tensor, zero_points.tensor,
                                                   1, tokens, inner, out.tensor));
  set_return(args, 8, *args[7]);
}

// --- dequantize_per_channel_group.out(input, scales, zero_points?, quant_min, quant_max, dtype,
//     int group_size, output_dtype, *, out)

namespace {

Status check_per_channel_group(Span<EValue*> args, DequantArgs* a) {
  const NamedTensor input{args[0]->to_tensor(), "input"};
  TL_RETURN_IF_ERROR(check_dequantize_common(input, {args[8]->to_tensor(), "out"}, *args[3],
                                             *args[4], *args[5], args[7], "output_dtype", a));
  TL_RETURN_IF_ERROR(portable::check_rank(input, 2, "a matrix"));
  return check_group_param_dtypes({args[1]->to_tensor(), "scales"},
                                  {args[2]->to_optional_tensor(), "zero_points"});
}

}  // namespace

Status dequantize_per_channel_group_prepare(PrepareContext&, Span<EValue*> args, PreparedCall*) {
  DequantArgs a;
  return check_per_channel_group(args, &a);
}

void dequantize_per_channel_group_out(KernelContext& ctx, Span<EValue*> args) {
  DequantArgs a;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_per_channel_group(args, &a));
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor scales{args[1]->to_tensor(), "scales"};
  const NamedTensor zero_points{args[2]->to_optional_tensor(), "zero_points"};
  const NamedTensor out{args[8]->to_tensor(), "out"};
  const int64_t rows = input.tensor.size(0);
  const int64_t cols = input.tensor.size(1);
  int64_t group_size = args[6]->to_int();
  TL_KERNEL_CHECK(ctx, group_size > 1, Error::kInvalidArgument,
                  "argument 'group_size' is %lld, expected more than 1",
                  static_cast<long long>(group_size));
  // torch: a group wider than the row with one scale per row means the row.
  if (group_size > cols && scales.tensor.dim() >= 1 &&
      scales.tensor.size(scales.tensor.dim() - 1) == 1) {
    group_size = cols;
  }
  TL_KERNEL_CHECK(ctx, group_size > 0 && cols % group_size == 0, Error::kInvalidArgument,
                  "argument 'group_size' (%lld) does not divide the %lld columns of 'input'",
                  static_cast<long long>(group_size), static_cast<long long>(cols));
  const int64_t groups = group_size > 0 ? cols / group_size : 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_group_param_shapes(scales, zero_points, rows, groups));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::resize_tensor(out, input.tensor.sizes()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_contiguous(input));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_contiguous(out));
  bool done = false;
  visit_quant_int_type(input.tensor.scalar_type(), [&](auto q_tag) {
    using Q = typename decltype(q_tag)::type;
    const Q* q = input.tensor.const_data_ptr<Q>();
    done = dequantize_group_rows(
        [q, cols](int64_t row, int64_t col) { return static_cast<int32_t>(q[row * cols + col]); },
        scales.tensor, zero_points.tensor, group_size, rows, cols,
        [](int64_t row) { return row; }, out.tensor);
  });
  TL_KERNEL_CHECK(ctx, done, Error::kInvalidType, "unsupported dtypes %s -> %s",
                  to_string(input.tensor.scalar_type()), to_string(out.tensor.scalar_type()));
  set_return(args, 9, *args[8]);
}

}  // namespace torchlight::quantized
