// The .npy header: magic, version, and the Python-literal dict that gives
// dtype, memory order and shape. Parsing never trusts the file: every length
// is checked before use and every loop is bounded by the header size.
//
// Format (NumPy's NEP 1): "\x93NUMPY", major, minor, a little-endian header
// length (uint16 for 1.0, uint32 for 2.0 and 3.0), then the dict, padded with
// spaces and ended by '\n'. The array data follows, in C order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/result.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/span.h"
#include "runtime/core/tensor.h"

namespace torchlight {

/// What a .npy header says about the data that follows it.
struct NpyHeader {
  ScalarType type = ScalarType::kFloat;
  std::vector<SizesType> sizes;  // [dim]; empty for a 0-d array.
  uint8_t major_version = 1;     // 1, 2 or 3.
  size_t data_offset = 0;        // Where the data starts: the header's total size.
  size_t data_nbytes = 0;        // numel * element size.
};

/// Bytes a reader needs before it can call npy_header_size(): the magic,
/// the version and the longest (4-byte) length field.
constexpr size_t kNpyPrefixSize = 12;

/// The total header size (magic through the dict's '\n') from the first
/// bytes of a file, which may be shorter than kNpyPrefixSize only if the file
/// is. `name` (e.g. the path) labels errors. Errors: kInvalidExternalData
/// when the bytes are too short or the magic is wrong; kNotSupported for a
/// format version other than 1.0, 2.0 or 3.0.
Result<size_t> npy_header_size(Span<const uint8_t> prefix, const char* name);

/// Parses a header; `bytes` holds at least npy_header_size() bytes (more is
/// fine). Accepted dtypes: <f2 <f4 <f8 |i1 <i2 <i4 <i8 |u1 <u2 <u4 <u8 |b1,
/// with '<', '|' or '=' as the byte-order mark.
///
/// Errors: kInvalidExternalData for a malformed header (truncated, bad magic,
/// not a dict, missing/duplicate/unknown keys, a negative dimension, or a
/// shape whose element or byte count overflows); kNotSupported for valid
/// files this reader does not handle (big-endian data, fortran_order True,
/// structured or other dtypes, more than kMaxTensorDim dims, a dimension
/// above INT32_MAX). Every message starts with 'name'.
Result<NpyHeader> parse_npy_header(Span<const uint8_t> bytes, const char* name);

/// The complete version 1.0 header for a C-order array of `type` and
/// `sizes`, byte for byte as numpy.save writes it (including the spare room
/// numpy leaves for growing the first dimension and 64-byte alignment).
/// Errors: kNotSupported for dtypes NumPy lacks (bfloat16: convert to
/// float32 first) and for quantized, float8 and bits types.
Result<std::string> format_npy_header(ScalarType type, Span<const SizesType> sizes);

}  // namespace torchlight
