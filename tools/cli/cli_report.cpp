#include "tools/cli/cli_report.h"

#include <cinttypes>
#include <cstdio>

namespace torchlight {
namespace cli {

int report_error(const std::string& file, const std::string& message) {
  std::string line = "error: ";
  if (!file.empty() && message.find(file) == std::string::npos) line += file + ": ";
  for (char c : message) line += (c == '\n' || c == '\r') ? ' ' : c;
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  return kExitFailure;
}

int report_error(const std::string& file, const Status& status) {
  return report_error(file, std::string(status.message()));
}

Status blame(const std::string& file, Status status) {
  if (status.ok() || file.empty()) return status;
  if (std::string(status.message()).find(file) != std::string::npos) return status;
  status.with_context("%s", file.c_str());
  return status;
}

std::string describe_sizes(Span<const SizesType> sizes) {
  std::string out = "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(sizes[i]);
  }
  return out + "]";
}

std::string describe_tensor_info(const TensorInfo& info) {
  std::string out = std::string(to_string(info.dtype)) + " [";
  for (size_t i = 0; i < info.sizes.size(); ++i) {
    if (i > 0) out += ", ";
    if (info.dynamism == TensorShapeDynamism::kDynamicBound) out += "<=";
    out += std::to_string(info.sizes[i]);
  }
  out += "]";
  if (info.dynamism == TensorShapeDynamism::kDynamicUnbound) out += " (unbounded)";
  return out;
}

std::string describe_scalar(const EValue& value) {
  char text[64];
  switch (value.tag()) {
    case Tag::kInt:
      std::snprintf(text, sizeof(text), "Int %" PRId64, value.to_int());
      return text;
    case Tag::kDouble:
      std::snprintf(text, sizeof(text), "Double %g", value.to_double());
      return text;
    case Tag::kBool:
      return value.to_bool() ? "Bool true" : "Bool false";
    default:
      return to_string(value.tag());
  }
}

std::string with_commas(uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace cli
}  // namespace torchlight
