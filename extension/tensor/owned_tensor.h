// OwnedTensor: a tensor that owns its metadata and data, for hosts (tools,
// tests, Module callers) that build inputs or keep outputs on the heap.
//
// The core's TensorImpl borrows every array it points at; OwnedTensor holds
// those arrays (sizes, dim order, strides, a 64-byte-aligned data buffer)
// and the TensorImpl itself on the heap. Moving an OwnedTensor moves the
// heap blocks without reallocating them, so Tensor handles obtained from
// tensor() stay valid across moves, until the OwnedTensor that holds the
// storage is destroyed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <type_traits>
#include <vector>

#include "runtime/core/evalue.h"
#include "runtime/core/half.h"
#include "runtime/core/result.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/tensor.h"
#include "runtime/platform/assert.h"

namespace torchlight {

namespace owned_tensor_detail {
/// The ScalarType that stores C++ type T.
template <typename T>
constexpr ScalarType scalar_type_of() {
  if constexpr (std::is_same_v<T, float>) return ScalarType::kFloat;
  else if constexpr (std::is_same_v<T, double>) return ScalarType::kDouble;
  else if constexpr (std::is_same_v<T, Half>) return ScalarType::kHalf;
  else if constexpr (std::is_same_v<T, BFloat16>) return ScalarType::kBFloat16;
  else if constexpr (std::is_same_v<T, bool>) return ScalarType::kBool;
  else if constexpr (std::is_same_v<T, int8_t>) return ScalarType::kChar;
  else if constexpr (std::is_same_v<T, int16_t>) return ScalarType::kShort;
  else if constexpr (std::is_same_v<T, int32_t>) return ScalarType::kInt;
  else if constexpr (std::is_same_v<T, int64_t>) return ScalarType::kLong;
  else if constexpr (std::is_same_v<T, uint8_t>) return ScalarType::kByte;
  else if constexpr (std::is_same_v<T, uint16_t>) return ScalarType::kUInt16;
  else if constexpr (std::is_same_v<T, uint32_t>) return ScalarType::kUInt32;
  else if constexpr (std::is_same_v<T, uint64_t>) return ScalarType::kUInt64;
  else static_assert(sizeof(T) == 0, "no ScalarType stores this C++ type");
}

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
}  // namespace owned_tensor_detail

class OwnedTensor {
 public:
  /// Alignment of every data buffer (a cache line; enough for any SIMD load).
  static constexpr size_t kDataAlignment = 64;

  /// A zero-filled tensor with contiguous dim order. Errors: kInvalidArgument
  /// for an invalid dtype, more than kMaxTensorDim dims, a negative size, or
  /// a byte count or stride that overflows; kMemoryAllocationFailed when
  /// malloc fails.
  static Result<OwnedTensor> make(ScalarType type, std::vector<SizesType> sizes,
                                  TensorShapeDynamism dynamism = TensorShapeDynamism::kStatic);

  /// As make(), laid out in `dim_order` (e.g. {0, 2, 3, 1} for channels-last).
  /// Also kInvalidArgument when dim_order is not a permutation of 0..dim-1.
  static Result<OwnedTensor> make_with_dim_order(
      ScalarType type, std::vector<SizesType> sizes, std::vector<DimOrderType> dim_order,
      TensorShapeDynamism dynamism = TensorShapeDynamism::kStatic);

  /// As make(), then copies `nbytes` bytes from `data` (storage order).
  /// Also kInvalidArgument when nbytes differs from what the shape needs.
  static Result<OwnedTensor> from_data(ScalarType type, std::vector<SizesType> sizes,
                                       const void* data, size_t nbytes,
                                       TensorShapeDynamism dynamism = TensorShapeDynamism::kStatic);

  /// A tensor of C++ element type T (float, int64_t, bool, Half, ...) from
  /// values in storage order: `from_values<float>({2, 2}, {1, 2, 3, 4})`.
  template <typename T>
  static Result<OwnedTensor> from_values(std::vector<SizesType> sizes, Span<const T> values) {
    return from_data(owned_tensor_detail::scalar_type_of<T>(), std::move(sizes), values.data(),
                     values.size() * sizeof(T));
  }
  template <typename T>
  static Result<OwnedTensor> from_values(std::vector<SizesType> sizes,
                                         std::initializer_list<T> values) {
    return from_values<T>(std::move(sizes), Span<const T>(values.begin(), values.size()));
  }
  template <typename T>
  static Result<OwnedTensor> from_values(std::vector<SizesType> sizes,
                                         const std::vector<T>& values) {
    static_assert(!std::is_same_v<T, bool>, "std::vector<bool> is not contiguous; use a Span");
    return from_values<T>(std::move(sizes), Span<const T>(values.data(), values.size()));
  }

  /// A deep copy of `tensor`: dtype, sizes, dim order, dynamism and data.
  /// Errors: kInvalidArgument for an undefined tensor or one whose data is
  /// null while it has elements; those of make().
  static Result<OwnedTensor> copy_of(const Tensor& tensor);

  OwnedTensor(OwnedTensor&&) noexcept = default;
  OwnedTensor& operator=(OwnedTensor&&) noexcept = default;
  OwnedTensor(const OwnedTensor&) = delete;
  OwnedTensor& operator=(const OwnedTensor&) = delete;
  ~OwnedTensor() = default;

  /// False only for a moved-from OwnedTensor.
  bool defined() const { return impl_ != nullptr; }

  /// A handle to this tensor, valid while this OwnedTensor (or the one it is
  /// moved into) lives. Undefined for a moved-from OwnedTensor.
  Tensor tensor() const { return Tensor(impl_.get()); }
  /// The tensor as a method input/output value; same lifetime as tensor().
  EValue evalue() const { return EValue(tensor()); }

  /// The data as T*. T must match the dtype's element size; typed access
  /// through a mismatching T is the caller's bug (checked in debug builds).
  template <typename T>
  T* data() {
    TL_DEBUG_ASSERT(sizeof(T) == element_size(impl_->scalar_type()));
    return static_cast<T*>(impl_->mutable_data());
  }
  template <typename T>
  const T* data() const {
    TL_DEBUG_ASSERT(sizeof(T) == element_size(impl_->scalar_type()));
    return static_cast<const T*>(impl_->data());
  }

  ScalarType scalar_type() const { return impl_->scalar_type(); }
  size_t dim() const { return impl_->dim(); }
  Span<const SizesType> sizes() const { return impl_->sizes(); }
  int64_t numel() const { return impl_->numel(); }
  size_t nbytes() const { return impl_->nbytes(); }

  /// Resizes as Tensor::resize does, and for a kDynamicUnbound tensor grows
  /// the data buffer when the new shape needs more bytes (keeping the old
  /// bytes as a prefix). Errors: those of TensorImpl::resize;
  /// kMemoryAllocationFailed when growing fails (the tensor is unchanged).
  Status resize(Span<const SizesType> new_sizes);

 private:
  OwnedTensor() = default;

  std::vector<SizesType> sizes_;       // [dim]
  std::vector<DimOrderType> dim_order_;  // [dim]
  std::vector<StridesType> strides_;   // [dim]
  std::unique_ptr<uint8_t, owned_tensor_detail::FreeDeleter> data_;  // [capacity_bytes_]
  size_t capacity_bytes_ = 0;
  std::unique_ptr<TensorImpl> impl_;   // Points into the members above.
};

}  // namespace torchlight
