// Human-readable tensor values for CLI output, logs and test failures.
#pragma once

#include <cstddef>
#include <string>

#include "runtime/core/tensor.h"

namespace torchlight {

/// The first `max_values` elements in logical (row-major over sizes) order,
/// whatever the dim order: "[1.5, 2, 3, ...]". "..." follows when elements
/// were left out; an empty tensor gives "[]". Floating values print with %g
/// (6 significant digits; "nan", "inf"), integers in full, bools as
/// true/false. Dtypes without a plain value (quantized, float8, bits16)
/// print each element's bytes in hex, e.g. "0x3c". An undefined tensor gives
/// "<undefined>", a tensor with elements but no data "<no data>".
std::string format_values(const Tensor& tensor, size_t max_values);

}  // namespace torchlight
