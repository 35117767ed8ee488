// 16-bit float storage types. Arithmetic happens in float: convert, compute,
// convert back, as ATen does for float16 and bfloat16 ("opmath").
#pragma once

#include <cstdint>
#include <cstring>

namespace torchlight {

/// IEEE 754 binary16.
struct Half {
  uint16_t bits = 0;

  Half() = default;
  explicit Half(float value) : bits(from_float(value)) {}
  operator float() const { return to_float(bits); }  // NOLINT: value type

  static uint16_t from_float(float value);  // Round to nearest even.
  static float to_float(uint16_t bits);
};

/// bfloat16: the top 16 bits of a float32.
struct BFloat16 {
  uint16_t bits = 0;

  BFloat16() = default;
  explicit BFloat16(float value) : bits(from_float(value)) {}
  operator float() const { return to_float(bits); }  // NOLINT: value type

  static uint16_t from_float(float value) {
    uint32_t u;
    std::memcpy(&u, &value, sizeof(u));
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;  // NaN stays NaN.
    u += 0x7fffu + ((u >> 16) & 1u);                     // Round to nearest even.
    return static_cast<uint16_t>(u >> 16);
  }
  static float to_float(uint16_t bits) {
    uint32_t u = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, sizeof(f));
    return f;
  }
};

}  // namespace torchlight
