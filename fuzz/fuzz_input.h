// Helpers shared by the fuzz targets: cutting one input into the several
// files a target needs, and the bounds every target keeps to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace torchlight {
namespace fuzz {

/// Separates the parts of a multi-part input (tokenizer file, then text to
/// encode). In the .dict files too, so the fuzzer can insert it.
inline constexpr std::string_view kPartSeparator = "\n@@@@\n";

/// `data` cut at each kPartSeparator into at most `max_parts` parts; the
/// last part keeps any further separators.
inline std::vector<std::string_view> split_parts(const uint8_t* data, size_t size,
                                                 size_t max_parts) {
  std::vector<std::string_view> parts;
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  while (parts.size() + 1 < max_parts) {
    const size_t at = rest.find(kPartSeparator);
    if (at == std::string_view::npos) break;
    parts.push_back(rest.substr(0, at));
    rest.remove_prefix(at + kPartSeparator.size());
  }
  parts.push_back(rest);
  return parts;
}

}  // namespace fuzz
}  // namespace torchlight
