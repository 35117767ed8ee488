// EValue: one value of a method, covering every KernelTypes member of the
// schema. Trivially copyable: lists and strings borrow their storage from the
// method allocator (or the caller), which must outlive the value.
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

#include "runtime/core/span.h"
#include "runtime/core/tensor.h"

namespace torchlight {

class EValue;

enum class Tag : uint8_t {
  kNone = 0,
  kInt,
  kDouble,
  kBool,
  kString,
  kTensor,
  kIntList,
  kDoubleList,
  kBoolList,
  kTensorList,
  kOptionalTensorList,
};

const char* to_string(Tag tag);

/// A list whose elements are other values of the method ("boxed"), so an
/// element that changes at run time (a symbolic size, a tensor) is seen by
/// every list that holds it. get() unboxes into caller-owned scratch.
template <typename T>
class BoxedList {
 public:
  BoxedList() = default;
  /// `items` and `scratch` each hold `size` entries and must outlive the list.
  BoxedList(EValue* const* items, T* scratch, size_t size)
      : items_(items), scratch_(scratch), size_(size) {}

  size_t size() const { return size_; }
  /// The current element values.
  Span<const T> get() const;

 private:
  EValue* const* items_ = nullptr;
  T* scratch_ = nullptr;
  size_t size_ = 0;
};

// Defined below, once EValue is complete.
template <>
Span<const int64_t> BoxedList<int64_t>::get() const;
template <>
Span<const Tensor> BoxedList<Tensor>::get() const;

class EValue {
 public:
  EValue() : tag_(Tag::kNone) { payload_.as_int = 0; }
  explicit EValue(int64_t v) : tag_(Tag::kInt) { payload_.as_int = v; }
  explicit EValue(double v) : tag_(Tag::kDouble) { payload_.as_double = v; }
  explicit EValue(bool v) : tag_(Tag::kBool) { payload_.as_bool = v; }
  explicit EValue(std::string_view v) : tag_(Tag::kString) {
    payload_.as_string = {v.data(), v.size()};
  }
  /// A string. Without this, a literal would convert to bool (a standard
  /// conversion beats string_view's user-defined one) and become a Bool.
  explicit EValue(const char* v)
      : EValue(v != nullptr ? std::string_view(v) : std::string_view()) {}
  explicit EValue(Tensor v) : tag_(Tag::kTensor) { payload_.as_tensor = v; }
  explicit EValue(BoxedList<int64_t> v) : tag_(Tag::kIntList) { payload_.as_int_list = v; }
  explicit EValue(Span<const double> v) : tag_(Tag::kDoubleList) { payload_.as_double_list = v; }
  explicit EValue(Span<const bool> v) : tag_(Tag::kBoolList) { payload_.as_bool_list = v; }
  /// From a smart pointer to a Tensor (extension/tensor's TensorPtr), so
  /// `module.forward(tensor_ptr)` and `{a_ptr, b_ptr}` read as upstream's.
  /// A null pointer gives an undefined Tensor, which Method::set_input refuses.
  template <typename P, typename = std::enable_if_t<
                            !std::is_pointer_v<P> &&
                            std::is_convertible_v<decltype(*std::declval<const P&>()), Tensor>>>
  EValue(const P& tensor_ptr) : tag_(Tag::kTensor) {  // NOLINT: implicit like upstream's
    payload_.as_tensor = tensor_ptr ? Tensor(*tensor_ptr) : Tensor();
  }
  /// A tensor list, or with `optional` set, a list where undefined = None.
  EValue(BoxedList<Tensor> v, bool optional)
      : tag_(optional ? Tag::kOptionalTensorList : Tag::kTensorList) {
    payload_.as_tensor_list = v;
  }

  Tag tag() const { return tag_; }
  bool is_none() const { return tag_ == Tag::kNone; }
  bool is_int() const { return tag_ == Tag::kInt; }
  bool is_double() const { return tag_ == Tag::kDouble; }
  bool is_bool() const { return tag_ == Tag::kBool; }
  bool is_string() const { return tag_ == Tag::kString; }
  bool is_tensor() const { return tag_ == Tag::kTensor; }
  bool is_int_list() const { return tag_ == Tag::kIntList; }
  bool is_double_list() const { return tag_ == Tag::kDoubleList; }
  bool is_bool_list() const { return tag_ == Tag::kBoolList; }
  bool is_tensor_list() const { return tag_ == Tag::kTensorList; }
  bool is_optional_tensor_list() const { return tag_ == Tag::kOptionalTensorList; }
  /// Int, Double or Bool: what ATen calls a Scalar.
  bool is_scalar() const { return is_int() || is_double() || is_bool(); }

  // Accessors. Calling one on the wrong tag is a bug in the caller; kernels
  // check tags first (kernels/portable/util/kernel_args.h), since a program
  // file decides which value reaches which argument.
  int64_t to_int() const { return payload_.as_int; }
  double to_double() const { return payload_.as_double; }
  bool to_bool() const { return payload_.as_bool; }
  std::string_view to_string() const {
    return {payload_.as_string.data(), payload_.as_string.size()};
  }
  Tensor to_tensor() const { return payload_.as_tensor; }
  /// An undefined Tensor for None, else the tensor.
  Tensor to_optional_tensor() const { return is_tensor() ? payload_.as_tensor : Tensor(); }
  Span<const int64_t> to_int_list() const { return payload_.as_int_list.get(); }
  Span<const double> to_double_list() const { return payload_.as_double_list; }
  Span<const bool> to_bool_list() const { return payload_.as_bool_list; }
  /// For kTensorList and kOptionalTensorList.
  Span<const Tensor> to_tensor_list() const { return payload_.as_tensor_list.get(); }
  /// A Scalar as double (Int, Double or Bool).
  double scalar_as_double() const {
    return is_double() ? payload_.as_double
                       : (is_bool() ? (payload_.as_bool ? 1.0 : 0.0)
                                    : static_cast<double>(payload_.as_int));
  }
  /// A Scalar as int64. Double truncates toward zero; since it may come
  /// from a file, NaN gives 0 and values beyond int64 saturate instead of
  /// being undefined behaviour.
  int64_t scalar_as_int() const {
    if (is_int()) return payload_.as_int;
    if (is_bool()) return payload_.as_bool ? 1 : 0;
    const double d = payload_.as_double;
    if (d != d) return 0;
    if (d >= 9223372036854775808.0) return INT64_MAX;  // 2^63
    if (d < -9223372036854775808.0) return INT64_MIN;
    return static_cast<int64_t>(d);
  }

  // Upstream ExecuTorch's spellings of the same accessors.
  bool isNone() const { return is_none(); }
  bool isInt() const { return is_int(); }
  bool isDouble() const { return is_double(); }
  bool isBool() const { return is_bool(); }
  bool isString() const { return is_string(); }
  bool isTensor() const { return is_tensor(); }
  bool isIntList() const { return is_int_list(); }
  bool isDoubleList() const { return is_double_list(); }
  bool isBoolList() const { return is_bool_list(); }
  bool isTensorList() const { return is_tensor_list(); }
  bool isScalar() const { return is_scalar(); }
  int64_t toInt() const { return to_int(); }
  double toDouble() const { return to_double(); }
  bool toBool() const { return to_bool(); }
  std::string_view toString() const { return to_string(); }
  Tensor toTensor() const { return to_tensor(); }
  Span<const int64_t> toIntList() const { return to_int_list(); }
  Span<const double> toDoubleList() const { return to_double_list(); }
  Span<const bool> toBoolList() const { return to_bool_list(); }
  Span<const Tensor> toTensorList() const { return to_tensor_list(); }

 private:
  union Payload {
    int64_t as_int;
    double as_double;
    bool as_bool;
    Span<const char> as_string;
    Tensor as_tensor;
    BoxedList<int64_t> as_int_list;
    Span<const double> as_double_list;
    Span<const bool> as_bool_list;
    BoxedList<Tensor> as_tensor_list;
    Payload() : as_int(0) {}
  } payload_;
  Tag tag_;
};

template <>
inline Span<const int64_t> BoxedList<int64_t>::get() const {
  for (size_t i = 0; i < size_; ++i) scratch_[i] = items_[i]->to_int();
  return {scratch_, size_};
}

template <>
inline Span<const Tensor> BoxedList<Tensor>::get() const {
  for (size_t i = 0; i < size_; ++i) {
    // A null item (or a None value) is an absent optional tensor.
    scratch_[i] = items_[i] != nullptr ? items_[i]->to_optional_tensor() : Tensor();
  }
  return {scratch_, size_};
}

}  // namespace torchlight
