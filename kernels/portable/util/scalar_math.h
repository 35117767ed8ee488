// Element arithmetic with ATen's meaning and no undefined behaviour: NaN-
// propagating min/max, Python-style floor division and remainder, C-style
// truncation and fmod, and integer powers. Each function takes and returns
// an opmath type (opmath.h): an integer type, bool, float or double.
//
// Integer division and remainder functions require b != 0 (callers check
// the divisor first, see check_nonzero_divisor in binary_ops.h); they define
// the one overflowing case, MIN / -1, as wrapping (MIN), and MIN % -1 as 0.
#pragma once

#include <cmath>
#include <type_traits>

#include "kernels/portable/util/opmath.h"

namespace torchlight::portable {

/// -a, wrapping for integers (-INT8_MIN is INT8_MIN and -uint8(5) is 251,
/// as ATen computes them).
template <typename T>
T negate(T a) {
  if constexpr (std::is_integral_v<T>) {
    using U = internal::WrapType<T>;
    return static_cast<T>(static_cast<U>(U{0} - static_cast<U>(a)));
  } else {
    return -a;
  }
}

/// The larger of a and b; NaN when either is NaN (ATen's maximum, clamp).
template <typename T>
T nan_max(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return a < b ? b : a;
}

/// The smaller of a and b; NaN when either is NaN (ATen's minimum, clamp).
template <typename T>
T nan_min(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return b < a ? b : a;
}

/// a / b rounded toward zero (div rounding_mode='trunc'). Integers: b != 0.
template <typename T>
T trunc_divide(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return negate(a);
    }
    return static_cast<T>(a / b);
  } else {
    return std::trunc(a / b);
  }
}

/// a / b rounded toward negative infinity, as Python's // (div
/// rounding_mode='floor', floor_divide). Integers: b != 0. Floats: division
/// by zero gives the IEEE quotient; otherwise the quotient is derived from
/// fmod, so it is exact where a / b would round up to the next integer.
template <typename T>
T floor_divide(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return negate(a);
      const T quotient = static_cast<T>(a / b);
      const T rest = static_cast<T>(a % b);
      // C++ truncates; step down when the exact quotient was negative.
      return (rest != 0 && ((rest < 0) != (b < 0))) ? static_cast<T>(quotient - 1) : quotient;
    } else {
      return static_cast<T>(a / b);
    }
  } else {
    if (b == 0) return a / b;
    const T mod = std::fmod(a, b);
    T quotient = (a - mod) / b;  // Close to an integer: a - mod is a multiple of b.
    if (mod != 0 && ((b < 0) != (mod < 0))) quotient -= T(1);
    if (quotient == 0) return std::copysign(T(0), a / b);
    T floored = std::floor(quotient);
    if (quotient - floored > T(0.5)) floored += T(1);  // Undo a rounding of (a - mod) / b.
    return floored;
  }
}

/// a - b * floor(a / b): the remainder with the sign of b, as Python's %
/// (remainder). Integers: b != 0. Floats: NaN for b == 0.
template <typename T>
T python_remainder(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return T(0);
      const T rest = static_cast<T>(a % b);
      return (rest != 0 && ((rest < 0) != (b < 0))) ? static_cast<T>(rest + b) : rest;
    } else {
      return static_cast<T>(a % b);
    }
  } else {
    T mod = std::fmod(a, b);
    if (mod != 0 && ((b < 0) != (mod < 0))) mod += b;
    return mod;
  }
}

/// a - b * trunc(a / b): the remainder with the sign of a, as C's fmod
/// (fmod). Integers: b != 0. Floats: NaN for b == 0.
template <typename T>
T truncated_remainder(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return T(0);
    }
    return static_cast<T>(a % b);
  } else {
    return std::fmod(a, b);
  }
}

/// base ** exponent for integers, wrapping on overflow. A negative exponent
/// gives 1 for base 1, +-1 for base -1 and 0 otherwise (ATen's powi: the
/// exact result truncated toward zero, with 0 ** -n = 0 instead of an error).
template <typename T>
T integer_power(T base, T exponent) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  if constexpr (std::is_signed_v<T>) {
    if (exponent < 0) {
      if (base == T(1)) return T(1);
      if (base == T(-1)) return exponent % 2 == 0 ? T(1) : T(-1);
      return T(0);
    }
  }
  using U = internal::WrapType<T>;
  U result = 1;
  U square = static_cast<U>(base);
  // Square and multiply: at most 64 rounds.
  for (U e = static_cast<U>(exponent); e != 0; e >>= 1) {
    if ((e & 1u) != 0) result = static_cast<U>(result * square);
    square = static_cast<U>(square * square);
  }
  return static_cast<T>(result);
}

}  // namespace torchlight::portable
