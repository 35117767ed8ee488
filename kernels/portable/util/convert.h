// Element conversions between the real types, with ATen's meaning and no
// undefined behaviour.
#pragma once

#include <cstdint>
#include <type_traits>

#include "runtime/core/evalue.h"
#include "runtime/core/half.h"

namespace torchlight::portable {

/// float16 and bfloat16: storage types whose arithmetic happens in float.
template <typename T>
inline constexpr bool kIsReducedFloat =
    std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

namespace internal {

// A float to an integer type. C++ leaves out-of-range values undefined and
// ATen inherits whatever the CPU does; here NaN becomes 0, values saturate at
// the int64 range, and narrower types then wrap modulo 2^bits (which is what
// ATen gives for uint8 on every platform).
template <typename To, typename From>
To float_to_integral(From value) {
  static_assert(std::is_integral_v<To> && !std::is_same_v<To, bool>);
  if (value != value) return 0;
  constexpr From kLow = static_cast<From>(-9223372036854775807.0 - 1.0);  // -2^63, exact
  constexpr From kHighExclusive = -kLow;                                // 2^63, exact
  int64_t wide;
  if (value <= kLow) {
    wide = INT64_MIN;
  } else if (value >= kHighExclusive) {
    wide = INT64_MAX;
  } else {
    wide = static_cast<int64_t>(value);  // Truncates toward zero, as C++ and ATen do.
  }
  return static_cast<To>(wide);
}

}  // namespace internal

/// Converts one element of a real type to another, as ATen's static_cast
/// does: to bool is "!= 0"; to and from float16/bfloat16 goes through float
/// (rounding to nearest even); integers narrow modulo 2^bits; floats to
/// integers truncate toward zero (see float_to_integral for out-of-range).
template <typename To, typename From>
To convert(From value) {
  if constexpr (std::is_same_v<To, From>) {
    return value;
  } else if constexpr (kIsReducedFloat<From>) {
    return convert<To>(static_cast<float>(value));
  } else if constexpr (std::is_same_v<To, bool>) {
    return value != static_cast<From>(0);
  } else if constexpr (kIsReducedFloat<To>) {
    return To(static_cast<float>(value));
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    return internal::float_to_integral<To>(value);
  } else {
    return static_cast<To>(value);
  }
}

/// A Scalar EValue (Int, Double or Bool) converted to T with convert(): no
/// range check, so an Int 300 becomes 44 as int8 (as ATen does for the
/// `other` of add.Scalar). Check first with check_scalar_fits() where ATen
/// checks (alpha). The caller has checked that `scalar` is a Scalar.
template <typename T>
T scalar_to(const EValue& scalar) {
  if (scalar.is_double()) return convert<T>(scalar.to_double());
  if (scalar.is_bool()) return convert<T>(scalar.to_bool());
  return convert<T>(scalar.to_int());
}

}  // namespace torchlight::portable
