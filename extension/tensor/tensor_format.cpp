#include "extension/tensor/tensor_format.h"

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "runtime/core/half.h"

namespace torchlight {
namespace {

// Appends element `p` (of the tensor's dtype) to `out`.
void append_value(ScalarType type, const uint8_t* p, std::string* out) {
  char text[64];
  auto load = [p](auto value) {
    std::memcpy(&value, p, sizeof(value));
    return value;
  };
  switch (type) {
    case ScalarType::kBool: out->append(*p != 0 ? "true" : "false"); return;
    case ScalarType::kByte: snprintf(text, sizeof(text), "%u", unsigned{*p}); break;
    case ScalarType::kChar: snprintf(text, sizeof(text), "%d", int{load(int8_t{})}); break;
    case ScalarType::kShort: snprintf(text, sizeof(text), "%d", int{load(int16_t{})}); break;
    case ScalarType::kInt: snprintf(text, sizeof(text), "%" PRId32, load(int32_t{})); break;
    case ScalarType::kLong: snprintf(text, sizeof(text), "%" PRId64, load(int64_t{})); break;
    case ScalarType::kUInt16: snprintf(text, sizeof(text), "%u", unsigned{load(uint16_t{})}); break;
    case ScalarType::kUInt32: snprintf(text, sizeof(text), "%" PRIu32, load(uint32_t{})); break;
    case ScalarType::kUInt64: snprintf(text, sizeof(text), "%" PRIu64, load(uint64_t{})); break;
    case ScalarType::kHalf:
      snprintf(text, sizeof(text), "%g", static_cast<double>(Half::to_float(load(uint16_t{}))));
      break;
    case ScalarType::kBFloat16:
      snprintf(text, sizeof(text), "%g",
               static_cast<double>(BFloat16::to_float(load(uint16_t{}))));
      break;
    case ScalarType::kFloat:
      snprintf(text, sizeof(text), "%g", static_cast<double>(load(float{})));
      break;
    case ScalarType::kDouble: snprintf(text, sizeof(text), "%g", load(double{})); break;
    default: {
      // No plain value: show the raw bytes, most significant first.
      const size_t size = element_size(type);
      out->append("0x");
      for (size_t i = size; i-- > 0;) {
        snprintf(text, sizeof(text), "%02x", unsigned{p[i]});
        out->append(text);
      }
      return;
    }
  }
  out->append(text);
}

}  // namespace

std::string format_values(const Tensor& tensor, size_t max_values) {
  if (!tensor.defined()) return "<undefined>";
  const int64_t numel = tensor.numel();
  if (numel == 0) return "[]";
  const auto* data = tensor.const_data_ptr<uint8_t>();
  if (data == nullptr) return "<no data>";

  const size_t dim = tensor.dim();
  const Span<const SizesType> sizes = tensor.sizes();
  const Span<const StridesType> strides = tensor.strides();
  const size_t element = tensor.element_size();
  const size_t count = static_cast<uint64_t>(numel) < max_values ? static_cast<size_t>(numel)
                                                                  : max_values;
  // Walk logical indices like an odometer, tracking the storage offset.
  int64_t index[kMaxTensorDim] = {};
  int64_t offset = 0;
  std::string out = "[";
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) out.append(", ");
    append_value(tensor.scalar_type(), data + static_cast<size_t>(offset) * element, &out);
    for (size_t d = dim; d-- > 0;) {
      offset += strides[d];
      if (++index[d] < sizes[d]) break;
      offset -= strides[d] * index[d];
      index[d] = 0;
    }
  }
  if (count < static_cast<uint64_t>(numel)) out.append(count > 0 ? ", ..." : "...");
  out.append("]");
  return out;
}

}  // namespace torchlight
