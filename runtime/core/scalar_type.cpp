#include "runtime/core/scalar_type.h"

#include <cstdio>

namespace torchlight {

bool is_valid(ScalarType type) { return element_size(type) != 0; }

size_t element_size(ScalarType type) {
  switch (type) {
    case ScalarType::kByte: case ScalarType::kChar: case ScalarType::kBool:
    case ScalarType::kQInt8: case ScalarType::kQUInt8: case ScalarType::kQUInt4x2:
    case ScalarType::kQUInt2x4: case ScalarType::kFloat8e5m2: case ScalarType::kFloat8e4m3fn:
    case ScalarType::kFloat8e5m2fnuz: case ScalarType::kFloat8e4m3fnuz:
      return 1;
    case ScalarType::kShort: case ScalarType::kHalf: case ScalarType::kBFloat16:
    case ScalarType::kBits16: case ScalarType::kUInt16:
      return 2;
    case ScalarType::kInt: case ScalarType::kFloat: case ScalarType::kQInt32:
    case ScalarType::kUInt32:
      return 4;
    case ScalarType::kLong: case ScalarType::kDouble: case ScalarType::kUInt64:
      return 8;
  }
  return 0;
}

const char* to_string(ScalarType type) {
  switch (type) {
    case ScalarType::kByte: return "uint8";
    case ScalarType::kChar: return "int8";
    case ScalarType::kShort: return "int16";
    case ScalarType::kInt: return "int32";
    case ScalarType::kLong: return "int64";
    case ScalarType::kHalf: return "float16";
    case ScalarType::kFloat: return "float32";
    case ScalarType::kDouble: return "float64";
    case ScalarType::kBool: return "bool";
    case ScalarType::kQInt8: return "qint8";
    case ScalarType::kQUInt8: return "quint8";
    case ScalarType::kQInt32: return "qint32";
    case ScalarType::kBFloat16: return "bfloat16";
    case ScalarType::kQUInt4x2: return "quint4x2";
    case ScalarType::kQUInt2x4: return "quint2x4";
    case ScalarType::kBits16: return "bits16";
    case ScalarType::kFloat8e5m2: return "float8_e5m2";
    case ScalarType::kFloat8e4m3fn: return "float8_e4m3fn";
    case ScalarType::kFloat8e5m2fnuz: return "float8_e5m2fnuz";
    case ScalarType::kFloat8e4m3fnuz: return "float8_e4m3fnuz";
    case ScalarType::kUInt16: return "uint16";
    case ScalarType::kUInt32: return "uint32";
    case ScalarType::kUInt64: return "uint64";
  }
  // Callers print this for corrupt files, so keep the number.
  static thread_local char unknown[24];
  snprintf(unknown, sizeof(unknown), "invalid(%d)", static_cast<int>(type));
  return unknown;
}

bool is_floating_point(ScalarType type) {
  return type == ScalarType::kHalf || type == ScalarType::kFloat ||
         type == ScalarType::kDouble || type == ScalarType::kBFloat16;
}

bool is_integral(ScalarType type) {
  switch (type) {
    case ScalarType::kByte: case ScalarType::kChar: case ScalarType::kShort:
    case ScalarType::kInt: case ScalarType::kLong: case ScalarType::kUInt16:
    case ScalarType::kUInt32: case ScalarType::kUInt64:
      return true;
    default:
      return false;
  }
}

namespace {

// Row/column order of the promotion table below.
int promotion_index(ScalarType type) {
  switch (type) {
    case ScalarType::kByte: return 0;
    case ScalarType::kChar: return 1;
    case ScalarType::kShort: return 2;
    case ScalarType::kInt: return 3;
    case ScalarType::kLong: return 4;
    case ScalarType::kHalf: return 5;
    case ScalarType::kFloat: return 6;
    case ScalarType::kDouble: return 7;
    case ScalarType::kBool: return 8;
    case ScalarType::kBFloat16: return 9;
    default: return -1;
  }
}

}  // namespace

bool promote_types(ScalarType a, ScalarType b, ScalarType* out) {
  // ATen's promotion lattice (c10/core/ScalarType.cpp), restated as data.
  constexpr ScalarType u1 = ScalarType::kByte, i1 = ScalarType::kChar, i2 = ScalarType::kShort,
                       i4 = ScalarType::kInt, i8 = ScalarType::kLong, f2 = ScalarType::kHalf,
                       f4 = ScalarType::kFloat, f8 = ScalarType::kDouble, b1 = ScalarType::kBool,
                       bf = ScalarType::kBFloat16;
  static constexpr ScalarType kTable[10][10] = {
      /*        u1  i1  i2  i4  i8  f2  f4  f8  b1  bf */
      /* u1 */ {u1, i2, i2, i4, i8, f2, f4, f8, u1, bf},
      /* i1 */ {i2, i1, i2, i4, i8, f2, f4, f8, i1, bf},
      /* i2 */ {i2, i2, i2, i4, i8, f2, f4, f8, i2, bf},
      /* i4 */ {i4, i4, i4, i4, i8, f2, f4, f8, i4, bf},
      /* i8 */ {i8, i8, i8, i8, i8, f2, f4, f8, i8, bf},
      /* f2 */ {f2, f2, f2, f2, f2, f2, f4, f8, f2, f4},
      /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f8, f4, f4},
      /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8},
      /* b1 */ {u1, i1, i2, i4, i8, f2, f4, f8, b1, bf},
      /* bf */ {bf, bf, bf, bf, bf, f4, f4, f8, bf, bf},
  };
  int ia = promotion_index(a);
  int ib = promotion_index(b);
  if (ia < 0 || ib < 0) return false;
  *out = kTable[ia][ib];
  return true;
}

bool can_cast(ScalarType from, ScalarType to) {
  // ATen (c10::canCast): no floating type, float8 included, into an integral
  // type; quantized and bits types count as neither floating nor integral.
  const bool from_floating = is_floating_point(from) || from == ScalarType::kFloat8e5m2 ||
                             from == ScalarType::kFloat8e4m3fn ||
                             from == ScalarType::kFloat8e5m2fnuz ||
                             from == ScalarType::kFloat8e4m3fnuz;
  if (from_floating && is_integral(to)) return false;
  if (from != ScalarType::kBool && to == ScalarType::kBool) return false;
  return true;
}

}  // namespace torchlight
