// ScalarType: element types, numbered exactly as in the .pte schema.
#pragma once

#include <cstddef>
#include <cstdint>

namespace torchlight {

enum class ScalarType : int8_t {
  kByte = 0,    // uint8
  kChar = 1,    // int8
  kShort = 2,   // int16
  kInt = 3,     // int32
  kLong = 4,    // int64
  kHalf = 5,    // float16
  kFloat = 6,   // float32
  kDouble = 7,  // float64
  kBool = 11,
  kQInt8 = 12,
  kQUInt8 = 13,
  kQInt32 = 14,
  kBFloat16 = 15,
  kQUInt4x2 = 16,
  kQUInt2x4 = 17,
  kBits16 = 22,
  kFloat8e5m2 = 23,
  kFloat8e4m3fn = 24,
  kFloat8e5m2fnuz = 25,
  kFloat8e4m3fnuz = 26,
  kUInt16 = 27,
  kUInt32 = 28,
  kUInt64 = 29,

  // Upstream ExecuTorch's (c10's) spellings, so executorch::aten::ScalarType::Float
  // and friends compile unchanged.
  Byte = kByte,
  Char = kChar,
  Short = kShort,
  Int = kInt,
  Long = kLong,
  Half = kHalf,
  Float = kFloat,
  Double = kDouble,
  Bool = kBool,
  QInt8 = kQInt8,
  QUInt8 = kQUInt8,
  QInt32 = kQInt32,
  BFloat16 = kBFloat16,
  QUInt4x2 = kQUInt4x2,
  QUInt2x4 = kQUInt2x4,
  Bits16 = kBits16,
  Float8_e5m2 = kFloat8e5m2,
  Float8_e4m3fn = kFloat8e4m3fn,
  Float8_e5m2fnuz = kFloat8e5m2fnuz,
  Float8_e4m3fnuz = kFloat8e4m3fnuz,
  UInt16 = kUInt16,
  UInt32 = kUInt32,
  UInt64 = kUInt64,
};

/// True for every value the schema defines (the enum has gaps).
bool is_valid(ScalarType type);
/// Bytes per element; 0 for a value that is not a valid ScalarType.
size_t element_size(ScalarType type);
/// PyTorch's name, e.g. "float32", "int64", "bool"; "invalid(<n>)" otherwise.
const char* to_string(ScalarType type);
bool is_floating_point(ScalarType type);  // float16/32/64, bfloat16
/// Signed and unsigned integers, without bool.
bool is_integral(ScalarType type);

/// The type ATen's type promotion gives two tensor operands of these types.
/// Only defined for bool, the integers int8..int64, uint8 and the floats;
/// returns false for anything else.
bool promote_types(ScalarType a, ScalarType b, ScalarType* out);

/// Whether ATen lets a result of type `from` be written into `to`
/// (no float, float8 included, into an integer; no number into bool).
bool can_cast(ScalarType from, ScalarType to);

}  // namespace torchlight
