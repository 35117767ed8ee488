// Scalar: a schema `Scalar` argument (an int, a float or a bool) as an
// unboxed kernel receives it (unboxed_kernel.h). Upstream code names it
// executorch::aten::Scalar.
#pragma once

#include <cstdint>
#include <type_traits>

#include "runtime/core/evalue.h"

namespace torchlight {

class Scalar {
 public:
  Scalar() : Scalar(int64_t{0}) {}
  Scalar(int64_t value) : tag_(Tag::kInt) { int_ = value; }  // NOLINT: implicit like upstream's
  Scalar(int value) : Scalar(int64_t{value}) {}              // NOLINT
  Scalar(double value) : tag_(Tag::kDouble) { double_ = value; }  // NOLINT
  Scalar(bool value) : tag_(Tag::kBool) { bool_ = value; }        // NOLINT

  /// `value` must hold an Int, a Double or a Bool (the schema check at load
  /// guarantees it for a Scalar argument).
  static Scalar from(const EValue& value) {
    if (value.is_double()) return Scalar(value.to_double());
    if (value.is_bool()) return Scalar(value.to_bool());
    return Scalar(value.to_int());
  }

  bool is_int() const { return tag_ == Tag::kInt; }
  bool is_double() const { return tag_ == Tag::kDouble; }
  bool is_bool() const { return tag_ == Tag::kBool; }

  /// The value converted as C++ converts (a bool is 0 or 1).
  double to_double() const { return is_double() ? double_ : is_bool() ? (bool_ ? 1.0 : 0.0) : static_cast<double>(int_); }
  int64_t to_int() const { return is_int() ? int_ : is_bool() ? (bool_ ? 1 : 0) : static_cast<int64_t>(double_); }
  bool to_bool() const { return is_bool() ? bool_ : is_int() ? int_ != 0 : double_ != 0.0; }

  // Upstream's spellings.
  bool isIntegral(bool include_bool) const { return is_int() || (include_bool && is_bool()); }
  bool isFloatingPoint() const { return is_double(); }
  bool isBoolean() const { return is_bool(); }
  template <typename T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) {
      return to_bool();
    } else if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(to_int());
    } else {
      return static_cast<T>(to_double());
    }
  }

 private:
  enum class Tag : uint8_t { kInt, kDouble, kBool };
  Tag tag_;
  union {
    int64_t int_;
    double double_;
    bool bool_;
  };
};

}  // namespace torchlight
