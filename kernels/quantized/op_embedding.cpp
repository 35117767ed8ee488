// quantized_decomposed::embedding_byte / embedding_2bit / embedding_4bit
// (.out and .dtype_out): rows of a group-wise quantized weight, dequantized.
// As exir defines them: weight int8/uint8 [V, packed]; scales float16/32
// [V] or [V, groups]; zero points none or scales' dtype, same shape; out =
// embedding(dequantize_per_channel_group(unpacked weight, ...), indices) in
// the scales' dtype (or `dtype`). Packing:
//   8 bit: one value a byte;
//   4 bit: two a byte, element 2j in the high nibble, 2j+1 in the low, each minus 8;
//   2 bit: four a byte, element 4j+k in bits 2k..2k+1, each minus 2.
// For int8 weights the unpacking follows torch's integer ops on signed
// bytes (trunc division and floor remainder by 16; the top 2-bit pair
// shifted arithmetically), so it agrees with exir's reference bit for bit.
// Every index is checked against V before anything is written, and out may
// not overlap the indices.
#include "kernels/quantized/dequant_group.h"
#include "kernels/quantized/quant_common.h"
#include "kernels/quantized/quantized_ops.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/linear_offsets.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/overlap.h"
#include "kernels/schemas/op_schemas.h"

namespace torchlight::quantized {
namespace {

struct EmbeddingLayout {
  int bits;
  bool dtype_arg;  // .dtype_out: a ScalarType? before out.
  const OpSchema* schema;
  size_t out_index() const { return dtype_arg ? 7 : 6; }
};

constexpr EmbeddingLayout kByte{8, false, &schemas::kquantized_decomposed__embedding_byte_out};
constexpr EmbeddingLayout kByteDtype{8, true,
                                     &schemas::kquantized_decomposed__embedding_byte_dtype_out};
constexpr EmbeddingLayout k2Bit{2, false, &schemas::kquantized_decomposed__embedding_2bit_out};
constexpr EmbeddingLayout k2BitDtype{2, true,
                                     &schemas::kquantized_decomposed__embedding_2bit_dtype_out};
constexpr EmbeddingLayout k4Bit{4, false, &schemas::kquantized_decomposed__embedding_4bit_out};
constexpr EmbeddingLayout k4BitDtype{4, true,
                                     &schemas::kquantized_decomposed__embedding_4bit_dtype_out};

// Checks that do not depend on sizes (prepare and eval).
Status check_static(Span<EValue*> args, const EmbeddingLayout& layout, ScalarType* out_dtype) {
  const NamedTensor weight{args[0]->to_tensor(), "weight"};
  const NamedTensor scales{args[1]->to_tensor(), "weight_scales"};
  const NamedTensor zero_points{args[2]->to_optional_tensor(), "weight_zero_points"};
  const NamedTensor indices{args[5]->to_tensor(), "indices"};
  const NamedTensor out{args[layout.out_index()]->to_tensor(), "out"};
  const ScalarType w = weight.tensor.scalar_type();
  TL_CHECK_OR_RETURN(w == ScalarType::kChar || w == ScalarType::kByte, Error::kInvalidType,
                     "argument 'weight' has dtype %s, expected int8 or uint8", to_string(w));
  const ScalarType s = scales.tensor.scalar_type();
  TL_CHECK_OR_RETURN(s == ScalarType::kFloat || s == ScalarType::kHalf, Error::kInvalidType,
                     "argument 'weight_scales' has dtype %s, expected float16 or float32",
                     to_string(s));
  if (zero_points.tensor.defined()) {
    TL_CHECK_OR_RETURN(zero_points.tensor.scalar_type() == s, Error::kInvalidType,
                       "argument 'weight_zero_points' has dtype %s, expected %s (the dtype of "
                       "'weight_scales')",
                       to_string(zero_points.tensor.scalar_type()), to_string(s));
  }
  TL_RETURN_IF_ERROR(portable::check_index_dtype(indices, /*allow_int32=*/true));
  const int64_t qmin = args[3]->to_int(), qmax = args[4]->to_int();
  if (layout.bits != 8) {
    const int64_t want_min = -(int64_t{1} << (layout.bits - 1));
    const int64_t want_max = (int64_t{1} << (layout.bits - 1)) - 1;
    TL_CHECK_OR_RETURN(qmin == want_min && qmax == want_max, Error::kInvalidArgument,
                       "arguments 'weight_quant_min' and 'weight_quant_max' are %lld and %lld, "
                       "expected %lld and %lld for %d-bit weights",
                       static_cast<long long>(qmin), static_cast<long long>(qmax),
                       static_cast<long long>(want_min), static_cast<long long>(want_max),
                       layout.bits);
  }
  *out_dtype = s;
  if (layout.dtype_arg) {
    TL_RETURN_IF_ERROR(optional_scalar_type_arg(*args[6], "dtype", s, out_dtype));
    TL_CHECK_OR_RETURN(visit_float_result(*out_dtype, [](auto) {}), Error::kInvalidType,
                       "argument 'dtype' is %s, expected %s", to_string(*out_dtype),
                       kFloatResultNames);
  }
  return check_dtype(out, *out_dtype);
}

// Element c of weight row `row`, unpacked as exir's reference does.
template <int kBits, typename W>
struct Unpack {
  const W* data;
  int64_t stride;  // Bytes per row.
  int32_t operator()(int64_t row, int64_t c) const {
    if constexpr (kBits == 8) {
      return data[row * stride + c];
    } else if constexpr (kBits == 4) {
      const int32_t b = data[row * stride + c / 2];
      int32_t nibble;
      if constexpr (std::is_signed_v<W>) {
        nibble = (c % 2 == 0) ? b / 16 : ((b % 16) + 16) % 16;
      } else {
        nibble = (c % 2 == 0) ? (b >> 4) : (b & 15);
      }
      return static_cast<int8_t>(nibble - 8);
    } else {
      const int32_t b = data[row * stride + c / 4];
      const int shift = static_cast<int>(c % 4) * 2;
      int32_t pair = (b >> shift) & 3;
      if constexpr (std::is_signed_v<W>) {
        if (shift == 6) pair = static_cast<int8_t>(b & 0xC0) >> 6;  // int8 & 192 is -64.
      }
      return static_cast<int8_t>(pair - 2);
    }
  }
};

// Everything after the load-time checks: shapes, indices, the lookup.
Status run_checked(Span<EValue*> args, const EmbeddingLayout& layout) {
  const NamedTensor weight{args[0]->to_tensor(), "weight"};
  const NamedTensor scales{args[1]->to_tensor(), "weight_scales"};
  const NamedTensor zero_points{args[2]->to_optional_tensor(), "weight_zero_points"};
  const NamedTensor indices{args[5]->to_tensor(), "indices"};
  const NamedTensor out{args[layout.out_index()]->to_tensor(), "out"};
  TL_RETURN_IF_ERROR(portable::check_rank(weight, 2, "a matrix [num_embeddings, packed_dim]"));
  const int64_t rows = weight.tensor.size(0);
  const int64_t packed = weight.tensor.size(1);
  const int64_t dim = packed * (8 / layout.bits);
  const size_t sdim = scales.tensor.dim();
  TL_CHECK_OR_RETURN(sdim == 1 || sdim == 2, Error::kInvalidArgument,
                     "argument 'weight_scales' must have rank 1 or 2, got %zu", sdim);
  TL_CHECK_OR_RETURN(scales.tensor.size(0) == rows, Error::kInvalidArgument,
                     "argument 'weight_scales' has %lld rows, expected %lld (the rows of 'weight')",
                     static_cast<long long>(scales.tensor.size(0)), static_cast<long long>(rows));
  if (zero_points.tensor.defined()) {
    const size_t zdim = zero_points.tensor.dim();
    TL_CHECK_OR_RETURN((zdim == 1 || zdim == 2) && zero_points.tensor.size(0) == rows,
                       Error::kInvalidArgument,
                       "argument 'weight_zero_points' must have rank 1 or 2 and %lld rows",
                       static_cast<long long>(rows));
  }
  const int64_t groups = sdim == 2 ? scales.tensor.size(1) : 1;
  TL_CHECK_OR_RETURN(groups > 0, Error::kInvalidArgument,
                     "argument 'weight_scales' has 0 groups per row");
  int64_t group_size = dim / groups;
  // dequantize_per_channel_group's rules on the derived group size.
  if (group_size > dim && scales.tensor.size(sdim - 1) == 1) group_size = dim;
  TL_CHECK_OR_RETURN(group_size > 1 && dim % group_size == 0, Error::kInvalidArgument,
                     "'weight' rows of %lld values do not split into %lld groups of more than "
                     "one value",
                     static_cast<long long>(dim), static_cast<long long>(groups));
  TL_RETURN_IF_ERROR(check_group_param_shapes(scales, zero_points, rows, dim / group_size));

  const size_t index_dims = indices.tensor.dim();
  TL_CHECK_OR_RETURN(index_dims + 1 <= kMaxTensorDim, Error::kInvalidArgument,
                     "argument 'indices' has %zu dimensions; out would have more than %zu",
                     index_dims, kMaxTensorDim);
  SizesType sizes[kMaxTensorDim];
  for (size_t d = 0; d < index_dims; ++d) sizes[d] = indices.tensor.size(d);
  sizes[index_dims] = static_cast<SizesType>(dim);
  TL_RETURN_IF_ERROR(portable::resize_tensor(out, {sizes, index_dims + 1}));
  TL_RETURN_IF_ERROR(check_contiguous(weight));
  TL_RETURN_IF_ERROR(check_contiguous(indices));
  TL_RETURN_IF_ERROR(check_contiguous(out));
  // Indices are read again while rows are written: an out planned over them
  // would turn written values into unchecked row numbers.
  TL_RETURN_IF_ERROR(portable::check_no_overlap(out, indices));
  const int64_t count = indices.tensor.numel();
  for (int64_t i = 0; i < count; ++i) {
    const int64_t index = portable::load_index(indices.tensor, i);
    TL_CHECK_OR_RETURN(index >= 0 && index < rows, Error::kInvalidArgument,
                       "argument 'indices' holds %lld at position %lld, out of range for "
                       "argument 'weight' with %lld rows",
                       static_cast<long long>(index), static_cast<long long>(i),
                       static_cast<long long>(rows));
  }
  const Tensor index_tensor = indices.tensor;
  auto source_row = [&index_tensor](int64_t i) { return portable::load_index(index_tensor, i); };
  bool done = false;
  auto dispatch = [&](auto w_tag) {
    using W = typename decltype(w_tag)::type;
    const W* w = weight.tensor.const_data_ptr<W>();
    if (layout.bits == 8) {
      done = dequantize_group_rows(Unpack<8, W>{w, packed}, scales.tensor, zero_points.tensor,
                                   group_size, count, dim, source_row, out.tensor);
    } else if (layout.bits == 4) {
      done = dequantize_group_rows(Unpack<4, W>{w, packed}, scales.tensor, zero_points.tensor,
                                   group_size, count, dim, source_row, out.tensor);
    } else {
      done = dequantize_group_rows(Unpack<2, W>{w, packed}, scales.tensor, zero_points.tensor,
                                   group_size, count, dim, source_row, out.tensor);
    }
  };
  if (weight.tensor.scalar_type() == ScalarType::kChar) {
    dispatch(TypeTag<int8_t>{});
  } else {
    dispatch(TypeTag<uint8_t>{});
  }
  TL_CHECK_OR_RETURN(done, Error::kInvalidType, "unsupported dtypes");
  set_return(args, layout.out_index() + 1, *args[layout.out_index()]);
  return Error::kOk;
}

// The self-checking eval: the load-time checks, then the rest.
Status run(Span<EValue*> args, const EmbeddingLayout& layout) {
  ScalarType out_dtype = ScalarType::kFloat;
  TL_RETURN_IF_ERROR(check_static(args, layout, &out_dtype));
  return run_checked(args, layout);
}

}  // namespace

// prepare runs the load-time checks and installs the eval that skips them.
#define TL_EMBEDDING_KERNEL(fn, layout)                                              \
  namespace {                                                                        \
  void fn##_prepared(KernelContext& ctx, Span<EValue*> args) {                       \
    TL_KERNEL_RETURN_IF_ERROR(ctx, run_checked(args, layout));                       \
  }                                                                                  \
  }                                                                                  \
  Status fn##_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {     \
    ScalarType out_dtype = ScalarType::kFloat;                                       \
    TL_RETURN_IF_ERROR(check_static(args, layout, &out_dtype));                      \
    call->eval = &fn##_prepared;                                                     \
    return Error::kOk;                                                               \
  }                                                                                  \
  void fn##_out(KernelContext& ctx, Span<EValue*> args) {                            \
    TL_KERNEL_RETURN_IF_ERROR(ctx, run(args, layout));                               \
  }

TL_EMBEDDING_KERNEL(embedding_byte, kByte)
TL_EMBEDDING_KERNEL(embedding_byte_dtype, kByteDtype)
TL_EMBEDDING_KERNEL(embedding_2bit, k2Bit)
TL_EMBEDDING_KERNEL(embedding_2bit_dtype, k2BitDtype)
TL_EMBEDDING_KERNEL(embedding_4bit, k4Bit)
TL_EMBEDDING_KERNEL(embedding_4bit_dtype, k4BitDtype)

#undef TL_EMBEDDING_KERNEL

}  // namespace torchlight::quantized
