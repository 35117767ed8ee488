// The quantized kernels' functions: for each operator an eval (self-checking:
// it validates every argument and can run without prepare) and a prepare
// that runs the same load-time checks (dtypes, ScalarType and quant range
// arguments, axis) once at method load, so a bad program fails to load
// naming the argument. Arguments follow each schema in
// kernels/schemas/extra_schemas.txt, then the return slot.
#pragma once

#include "runtime/core/evalue.h"
#include "runtime/core/span.h"
#include "runtime/core/status.h"
#include "runtime/kernel/kernel.h"
#include "runtime/kernel/kernel_context.h"

namespace torchlight::quantized {

#define TL_QUANTIZED_KERNEL(name)                                          \
  void name##_out(KernelContext& ctx, Span<EValue*> args);                 \
  Status name##_prepare(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call);

TL_QUANTIZED_KERNEL(quantize_per_tensor)
TL_QUANTIZED_KERNEL(quantize_per_tensor_tensor)
TL_QUANTIZED_KERNEL(quantize_per_channel)
TL_QUANTIZED_KERNEL(quantize_per_token)
TL_QUANTIZED_KERNEL(dequantize_per_tensor)
TL_QUANTIZED_KERNEL(dequantize_per_tensor_tensor)
TL_QUANTIZED_KERNEL(dequantize_per_channel)
TL_QUANTIZED_KERNEL(dequantize_per_token)
TL_QUANTIZED_KERNEL(dequantize_per_channel_group)
TL_QUANTIZED_KERNEL(choose_qparams_tensor)
TL_QUANTIZED_KERNEL(choose_qparams_per_token_asymmetric)
TL_QUANTIZED_KERNEL(embedding_byte)
TL_QUANTIZED_KERNEL(embedding_byte_dtype)
TL_QUANTIZED_KERNEL(embedding_2bit)
TL_QUANTIZED_KERNEL(embedding_2bit_dtype)
TL_QUANTIZED_KERNEL(embedding_4bit)
TL_QUANTIZED_KERNEL(embedding_4bit_dtype)
TL_QUANTIZED_KERNEL(mixed_mm)
TL_QUANTIZED_KERNEL(mixed_linear)
TL_QUANTIZED_KERNEL(add)
TL_QUANTIZED_KERNEL(linear_8da4w)
TL_QUANTIZED_KERNEL(linear_4w)
TL_QUANTIZED_KERNEL(linear_int8)
TL_QUANTIZED_KERNEL(linear_qs8)
TL_QUANTIZED_KERNEL(linear_qs8_tensor)

#undef TL_QUANTIZED_KERNEL

}  // namespace torchlight::quantized
