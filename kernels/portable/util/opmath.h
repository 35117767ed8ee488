// "opmath": the type arithmetic happens in, and arithmetic on it that is
// defined for every input.
//
// As in ATen, float16 and bfloat16 compute in float (convert, compute once,
// round once); every other type computes in itself. Integer arithmetic wraps
// modulo 2^bits like ATen's (whose signed overflow is formally undefined but
// wraps in practice); here it goes through unsigned types so it is defined.
// Bool arithmetic follows ATen: + is logical or, * is logical and.
#pragma once

#include <type_traits>

#include "runtime/core/half.h"

namespace torchlight::portable {

template <typename T>
struct OpMath {
  using type = T;
};
template <>
struct OpMath<Half> {
  using type = float;
};
template <>
struct OpMath<BFloat16> {
  using type = float;
};
/// The compute type of a storage type: float for float16/bfloat16, else T.
template <typename T>
using opmath_t = typename OpMath<T>::type;

namespace internal {

// An unsigned type at least as wide as both T and unsigned int, so the
// operands are never promoted back to (signed) int before the operation.
template <typename T>
using WrapType = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned,
                                    std::make_unsigned_t<T>>;

template <typename T>
inline constexpr bool kIsWrappingInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

}  // namespace internal

/// a + b; wraps for integers; logical or for bool.
template <typename T>
T opmath_add(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a || b;
  } else if constexpr (internal::kIsWrappingInt<T>) {
    using U = internal::WrapType<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

/// a - b; wraps for integers. ATen has no bool subtraction.
template <typename T>
T opmath_sub(T a, T b) {
  static_assert(!std::is_same_v<T, bool>, "ATen rejects subtraction of bools");
  if constexpr (internal::kIsWrappingInt<T>) {
    using U = internal::WrapType<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
  } else {
    return a - b;
  }
}

/// a * b; wraps for integers; logical and for bool.
template <typename T>
T opmath_mul(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a && b;
  } else if constexpr (internal::kIsWrappingInt<T>) {
    using U = internal::WrapType<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return a * b;
  }
}

}  // namespace torchlight::portable
