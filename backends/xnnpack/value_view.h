// ValueView: one XValue of the payload seen as its tensor part plus its
// (optional) quantization, whichever union member holds it.
#pragma once

#include <cstdint>

#include "runtime/core/result.h"

namespace fb_xnnpack {
struct XValue;
struct XNNTensorValue;
struct XNNQuantizedTensorValue;
}  // namespace fb_xnnpack

namespace torchlight {
namespace xnnpack {

// XNNTensorValue.flags (same values as XNN_VALUE_FLAG_EXTERNAL_*).
inline constexpr uint32_t kExternalInput = 1;
inline constexpr uint32_t kExternalOutput = 2;

struct ValueView {
  const fb_xnnpack::XNNTensorValue* tensor = nullptr;             // Never null.
  const fb_xnnpack::XNNQuantizedTensorValue* quantized = nullptr;  // Null if plain.
};

/// Errors: kInvalidProgram when value `index` is missing, has no tensor or
/// an unknown union member.
Result<ValueView> view_value(const fb_xnnpack::XValue* value, uint32_t index);

}  // namespace xnnpack
}  // namespace torchlight
