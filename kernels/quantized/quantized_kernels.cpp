#include "kernels/quantized/quantized_kernels.h"

#include "kernels/quantized/quantized_ops.h"
#include "kernels/schemas/op_schemas.h"

namespace torchlight {
namespace {

#define TL_QK(op_name, schema, fn)                                                        \
  Kernel {                                                                                \
    op_name, &quantized::fn##_out, KernelPriority::kCustom, KernelKey{}, &schemas::schema, \
        &quantized::fn##_prepare                                                          \
  }

// constexpr: constant-initialised, so no code runs before main.
constexpr Kernel kQuantizedKernels[] = {
    TL_QK("quantized_decomposed::quantize_per_tensor.out",
          kquantized_decomposed__quantize_per_tensor_out, quantize_per_tensor),
    TL_QK("quantized_decomposed::quantize_per_tensor.Tensor_out",
          kquantized_decomposed__quantize_per_tensor_Tensor_out, quantize_per_tensor_tensor),
    TL_QK("quantized_decomposed::quantize_per_channel.out",
          kquantized_decomposed__quantize_per_channel_out, quantize_per_channel),
    TL_QK("quantized_decomposed::quantize_per_token.out",
          kquantized_decomposed__quantize_per_token_out, quantize_per_token),
    TL_QK("quantized_decomposed::dequantize_per_tensor.out",
          kquantized_decomposed__dequantize_per_tensor_out, dequantize_per_tensor),
    TL_QK("quantized_decomposed::dequantize_per_tensor.Tensor_out",
          kquantized_decomposed__dequantize_per_tensor_Tensor_out, dequantize_per_tensor_tensor),
    TL_QK("quantized_decomposed::dequantize_per_channel.out",
          kquantized_decomposed__dequantize_per_channel_out, dequantize_per_channel),
    TL_QK("quantized_decomposed::dequantize_per_token.out",
          kquantized_decomposed__dequantize_per_token_out, dequantize_per_token),
    TL_QK("quantized_decomposed::dequantize_per_channel_group.out",
          kquantized_decomposed__dequantize_per_channel_group_out, dequantize_per_channel_group),
    TL_QK("quantized_decomposed::choose_qparams.Tensor_out",
          kquantized_decomposed__choose_qparams_Tensor_out, choose_qparams_tensor),
    TL_QK("quantized_decomposed::choose_qparams_per_token_asymmetric.out",
          kquantized_decomposed__choose_qparams_per_token_asymmetric_out,
          choose_qparams_per_token_asymmetric),
    TL_QK("quantized_decomposed::embedding_byte.out",
          kquantized_decomposed__embedding_byte_out, embedding_byte),
    TL_QK("quantized_decomposed::embedding_byte.dtype_out",
          kquantized_decomposed__embedding_byte_dtype_out, embedding_byte_dtype),
    TL_QK("quantized_decomposed::embedding_2bit.out",
          kquantized_decomposed__embedding_2bit_out, embedding_2bit),
    TL_QK("quantized_decomposed::embedding_2bit.dtype_out",
          kquantized_decomposed__embedding_2bit_dtype_out, embedding_2bit_dtype),
    TL_QK("quantized_decomposed::embedding_4bit.out",
          kquantized_decomposed__embedding_4bit_out, embedding_4bit),
    TL_QK("quantized_decomposed::embedding_4bit.dtype_out",
          kquantized_decomposed__embedding_4bit_dtype_out, embedding_4bit_dtype),
    TL_QK("quantized_decomposed::mixed_mm.out", kquantized_decomposed__mixed_mm_out, mixed_mm),
    TL_QK("quantized_decomposed::mixed_linear.out", kquantized_decomposed__mixed_linear_out,
          mixed_linear),
    TL_QK("quantized_decomposed::add.out", kquantized_decomposed__add_out, add),
    TL_QK("torchlight::linear_8da4w.out", ktorchlight__linear_8da4w_out, linear_8da4w),
    TL_QK("torchlight::linear_4w.out", ktorchlight__linear_4w_out, linear_4w),
    TL_QK("torchlight::linear_int8.out", ktorchlight__linear_int8_out, linear_int8),
    TL_QK("torchlight::linear_qs8.out", ktorchlight__linear_qs8_out, linear_qs8),
    TL_QK("torchlight::linear_qs8.Tensor_out", ktorchlight__linear_qs8_Tensor_out,
          linear_qs8_tensor),
};

#undef TL_QK

}  // namespace

Span<const Kernel> quantized_kernels() { return Span<const Kernel>(kQuantizedKernels); }

Status register_quantized_kernels(KernelRegistry& registry) {
  return registry.register_kernels(quantized_kernels());
}

}  // namespace torchlight
