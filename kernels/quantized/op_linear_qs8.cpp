// torchlight::linear_qs8.out(Tensor input, float input_scale, int input_zero_point,
//     Tensor weight, Tensor weight_scales, Tensor? bias=None, *, Tensor(a!) out) -> Tensor(a!)
// torchlight::linear_qs8.Tensor_out(Tensor input, Tensor input_scale,
//     Tensor input_zero_point, Tensor weight, Tensor weight_scales, Tensor? bias=None, *,
//     Tensor(a!) out) -> Tensor(a!)
//
// The fused form of a pt2e-quantized linear without a delegate,
// linear(dequantize_per_tensor(input), dequantize_per_channel(weight), bias):
// input int8 [..., K] with one scale and zero point (scalars when calibrated
// statically; one-element tensors from choose_qparams when dynamic), weight
// int8 [N, K] with symmetric float32 scales [N] (a per-tensor weight scale
// repeated N times), bias float32 [N] or none, out float32 [..., N]. The
// products are summed exactly in int32 and scaled once (linear_qs8.h), so
// the result differs from the decomposed graph by float rounding only.
// Columns are split over the thread pool once per call; each chunk serves
// every row in blocks of kRowsQs8. No scratch memory. The VNNI loops also
// need each column's weight sum: prepare computes it into method memory
// when the weight is a program constant, else the loops sum it per call.
// With AMX, calls of kMinRowsAmx rows or more lay the rows out for the tiles
// in method scratch and run linear_qs8_amx_columns.
#include <algorithm>

#include "kernels/quantized/column_chunks.h"
#include "kernels/quantized/linear_qs8.h"
#include "kernels/quantized/quant_common.h"
#include "kernels/quantized/quantized_ops.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/schemas/op_schemas.h"

namespace torchlight::quantized {
namespace {

// Argument slots (both overloads).
constexpr size_t kInput = 0, kScale = 1, kZeroPoint = 2, kWeight = 3, kScales = 4, kBias = 5,
                 kOut = 6;

Status check_static(Span<EValue*> args) {
  const NamedTensor input{args[kInput]->to_tensor(), "input"};
  const NamedTensor weight{args[kWeight]->to_tensor(), "weight"};
  const NamedTensor scales{args[kScales]->to_tensor(), "weight_scales"};
  const NamedTensor bias{args[kBias]->to_optional_tensor(), "bias"};
  const NamedTensor out{args[kOut]->to_tensor(), "out"};
  int64_t k = 0, n = 0;
  TL_RETURN_IF_ERROR(check_quantized_linear(input, ScalarType::kChar, weight, ScalarType::kChar,
                                            "a matrix [N, K] of int8", scales, bias, out, &k,
                                            &n));
  TL_CHECK_OR_RETURN(weight.tensor.size(1) == k && k > 0 && k <= kMaxKQs8,
                     Error::kInvalidArgument,
                     "argument 'weight' has %d columns, expected K = %lld (input's last dim, "
                     "1..%lld)",
                     weight.tensor.size(1), static_cast<long long>(k),
                     static_cast<long long>(kMaxKQs8));
  TL_CHECK_OR_RETURN(scales.tensor.numel() == n, Error::kInvalidArgument,
                     "argument 'weight_scales' has %lld elements, expected %lld (N)",
                     static_cast<long long>(scales.tensor.numel()), static_cast<long long>(n));
  return check_bias_length(bias, n);
}

/// The input's quantization parameters, checked: a zero point inside int8's
/// range and a finite positive scale.
Status qparams(double scale, int64_t zero_point, float* scale_out, int32_t* zero_point_out) {
  TL_RETURN_IF_ERROR(check_scale_value(scale, "input_scale"));
  TL_CHECK_OR_RETURN(zero_point >= -128 && zero_point <= 127, Error::kInvalidArgument,
                     "argument 'input_zero_point' is %lld, expected -128..127 (int8 input)",
                     static_cast<long long>(zero_point));
  *scale_out = static_cast<float>(scale);
  *zero_point_out = static_cast<int32_t>(zero_point);
  return Error::kOk;
}

Status check_qparam_tensor(const NamedTensor& t, bool is_scale) {
  if (is_scale) {
    TL_CHECK_OR_RETURN(t.tensor.scalar_type() == ScalarType::kFloat ||
                           t.tensor.scalar_type() == ScalarType::kDouble,
                       Error::kInvalidType, "argument '%s' has dtype %s, expected float32 or "
                       "float64", t.name, to_string(t.tensor.scalar_type()));
  } else {
    TL_CHECK_OR_RETURN(is_zero_point_dtype(t.tensor.scalar_type()), Error::kInvalidType,
                       "argument '%s' has dtype %s, expected an integer dtype", t.name,
                       to_string(t.tensor.scalar_type()));
  }
  return Error::kOk;
}

Status check_static_tensor(Span<EValue*> args) {
  TL_RETURN_IF_ERROR(check_static(args));
  TL_RETURN_IF_ERROR(check_qparam_tensor({args[kScale]->to_tensor(), "input_scale"}, true));
  return check_qparam_tensor({args[kZeroPoint]->to_tensor(), "input_zero_point"}, false);
}

/// One element of a qparam tensor, checked at run time (choose_qparams fills it).
Status read_qparams(Span<EValue*> args, float* scale, int32_t* zero_point) {
  const NamedTensor s{args[kScale]->to_tensor(), "input_scale"};
  const NamedTensor z{args[kZeroPoint]->to_tensor(), "input_zero_point"};
  for (const NamedTensor* t : {&s, &z}) {
    TL_CHECK_OR_RETURN(t->tensor.numel() == 1, Error::kInvalidArgument,
                       "argument '%s' must have one element, got %lld", t->name,
                       static_cast<long long>(t->tensor.numel()));
    TL_RETURN_IF_ERROR(portable::check_has_data(*t));
  }
  return qparams(load_scale(s.tensor, 0), load_int(z.tensor, 0), scale, zero_point);
}

// Calls of this many rows or more run on AMX tiles where the CPU has them
// (two row blocks of 16 per weight tile), K % 4 == 0 and scratch allows.
constexpr int64_t kMinRowsAmx = 32;

bool use_amx(int64_t rows, int64_t k) {
  return quant_isa() == QuantIsa::kAmx && rows >= kMinRowsAmx && k % 4 == 0;
}

// AMX scratch: the rows in tile layout, then (for a weight not constant)
// its column sums.
size_t amx_scratch_bytes(int64_t rows, int64_t k, int64_t n) {
#if defined(__x86_64__) || defined(_M_X64)
  return pack_rows_qs8_amx_bytes(rows, k) + sizeof(int32_t) * static_cast<size_t>(n);
#else
  (void)rows, (void)k, (void)n;
  return 0;
#endif
}

// What prepare keeps for a constant weight on a VNNI CPU.
struct PreparedQs8 {
  const int8_t* weight;  // The weight the sums were made from.
  const int32_t* sums;   // [N]
};

Status prepare_weight_sums(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call) {
  const Tensor& weight = args[kWeight]->to_tensor();
  const int64_t n = weight.size(0);
  const int64_t k = weight.size(1);
  const int64_t planned_rows = args[kInput]->to_tensor().numel() / k;
  if (use_amx(planned_rows, k)) call->scratch_bytes = amx_scratch_bytes(planned_rows, k, n);
  if (!linear_qs8_uses_weight_sums() || !ctx.is_constant(kWeight)) return Error::kOk;
  auto* prepared = static_cast<PreparedQs8*>(ctx.allocate(sizeof(PreparedQs8)));
  auto* sums = static_cast<int32_t*>(ctx.allocate(sizeof(int32_t) * static_cast<size_t>(n)));
  TL_CHECK_OR_RETURN(prepared != nullptr && sums != nullptr, Error::kMemoryAllocationFailed,
                     "no method memory for the weight's %lld column sums", static_cast<long long>(n));
  prepared->weight = weight.const_data_ptr<int8_t>();
  prepared->sums = sums;
  weight_sums_qs8(prepared->weight, k, 0, n, sums);
  call->state = prepared;
  return Error::kOk;
}

void run(KernelContext& ctx, Span<EValue*> args, float x_scale, int32_t zero_point) {
  const NamedTensor input{args[kInput]->to_tensor(), "input"};
  const NamedTensor weight{args[kWeight]->to_tensor(), "weight"};
  const NamedTensor scales{args[kScales]->to_tensor(), "weight_scales"};
  const NamedTensor bias{args[kBias]->to_optional_tensor(), "bias"};
  const NamedTensor out{args[kOut]->to_tensor(), "out"};
  const size_t dim = input.tensor.dim();
  const int64_t k = input.tensor.size(dim - 1);
  const int64_t n = weight.tensor.size(0);
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_linear_out(input, weight, scales, bias, out, n));
  const ColumnsQs8Fn columns = select_linear_qs8();
  const int64_t rows = input.tensor.numel() / k;
  const int8_t* x = input.tensor.const_data_ptr<int8_t>();
  float* y = out.tensor.mutable_data_ptr<float>();
  RowsQs8 base{};
  base.zero_point = zero_point;
  base.x_scale = x_scale;
  base.weight = weight.tensor.const_data_ptr<int8_t>();
  base.scales = scales.tensor.const_data_ptr<float>();
  base.bias = bias.tensor.defined() ? bias.tensor.const_data_ptr<float>() : nullptr;
  // The sums prepare made, if it made them for this very weight.
  const PreparedQs8* prepared = ctx.state<PreparedQs8>();
  base.weight_sums =
      prepared != nullptr && prepared->weight == base.weight ? prepared->sums : nullptr;
  base.k = k;
  base.n = n;
#if defined(__x86_64__) || defined(_M_X64)
  if (use_amx(rows, k) && ctx.scratch() != nullptr &&
      ctx.scratch_bytes() >= amx_scratch_bytes(rows, k, n)) {
    auto* packed = static_cast<int8_t*>(ctx.scratch());
    pack_rows_qs8_amx(x, rows, k, packed);
    if (base.weight_sums == nullptr) {
      auto* sums = reinterpret_cast<int32_t*>(packed + pack_rows_qs8_amx_bytes(rows, k));
      parallel_column_chunks(n, [&](int64_t n_begin, int64_t n_end) {
        weight_sums_qs8(base.weight, k, n_begin, n_end, sums);
      });
      base.weight_sums = sums;
    }
    base.x = x;
    base.out = y;
    parallel_column_chunks(n, [&](int64_t n_begin, int64_t n_end) {
      linear_qs8_amx_columns(base, packed, rows, n_begin, n_end);
    });
    set_return(args, kOut + 1, *args[kOut]);
    return;
  }
#endif
  parallel_column_chunks(n, [&](int64_t n_begin, int64_t n_end) {
    for (int64_t r0 = 0; r0 < rows; r0 += kRowsQs8) {
      RowsQs8 block = base;
      block.x = x + r0 * k;
      block.rows = static_cast<int>(std::min<int64_t>(kRowsQs8, rows - r0));
      block.out = y + r0 * n;
      columns(block, n_begin, n_end);
    }
  });
  set_return(args, kOut + 1, *args[kOut]);
}

}  // namespace

Status linear_qs8_prepare(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(check_static(args));
  float scale = 0;
  int32_t zero_point = 0;
  TL_RETURN_IF_ERROR(
      qparams(args[kScale]->to_double(), args[kZeroPoint]->to_int(), &scale, &zero_point));
  return prepare_weight_sums(ctx, args, call);
}

void linear_qs8_out(KernelContext& ctx, Span<EValue*> args) {
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_static(args));
  float scale = 0;
  int32_t zero_point = 0;
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, qparams(args[kScale]->to_double(), args[kZeroPoint]->to_int(), &scale, &zero_point));
  run(ctx, args, scale, zero_point);
}

Status linear_qs8_tensor_prepare(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(check_static_tensor(args));
  return prepare_weight_sums(ctx, args, call);
}

void linear_qs8_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_static_tensor(args));
  float scale = 0;
  int32_t zero_point = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, read_qparams(args, &scale, &zero_point));
  run(ctx, args, scale, zero_point);
}

}  // namespace torchlight::quantized
