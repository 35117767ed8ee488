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
};

#undef TL_QK

}  // namespace

Span<const Kernel> quantized_kernels() { return Span<const Kernel>(kQuantizedKernels); }

Status register_quantized_kernels(KernelRegistry& registry) {
  return registry.register_kernels(quantized_kernels());
}

}  // namespace torchlight
