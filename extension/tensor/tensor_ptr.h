// TensorPtr: upstream ExecuTorch's shared tensor handle and its makers
// (make_tensor_ptr, from_blob, zeros, ones, full, rand, clone_tensor_ptr...),
// with the same names, arguments and defaults, so host code written against
// executorch::extension compiles here (compat/upstream_headers re-exports it).
//
// A TensorPtr owns the tensor's metadata and, unless it came from from_blob,
// its data; copies share both. A maker given bad arguments (a dtype it cannot
// store, a data size that does not match the shape) logs why and returns a
// null TensorPtr, which Method::set_input refuses with an error: upstream
// aborts the process instead.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "extension/tensor/owned_tensor.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace torchlight {

using TensorPtr = std::shared_ptr<Tensor>;

/// Upstream's default: inputs may be resized within their capacity.
constexpr TensorShapeDynamism kTensorPtrDefaultDynamism = TensorShapeDynamism::kDynamicBound;

/// Wraps caller-owned `data` (not copied; it must outlive the TensorPtr),
/// contiguous, or with explicit `strides` (in elements).
TensorPtr from_blob(void* data, std::vector<SizesType> sizes,
                    ScalarType type = ScalarType::kFloat,
                    TensorShapeDynamism dynamism = kTensorPtrDefaultDynamism);
TensorPtr from_blob(void* data, std::vector<SizesType> sizes, std::vector<StridesType> strides,
                    ScalarType type = ScalarType::kFloat,
                    TensorShapeDynamism dynamism = kTensorPtrDefaultDynamism);
/// Upstream's other spelling of from_blob.
inline TensorPtr make_tensor_ptr(std::vector<SizesType> sizes, void* data,
                                 ScalarType type = ScalarType::kFloat,
                                 TensorShapeDynamism dynamism = kTensorPtrDefaultDynamism) {
  return from_blob(data, std::move(sizes), type, dynamism);
}

namespace tensor_ptr_detail {
/// An owning TensorPtr of `type` from `count` values of `source_type`
/// (copied when the types match, else element i converted from
/// `value_at(i)`), laid out in `dim_order` (empty: contiguous).
TensorPtr make_owned(std::vector<SizesType> sizes, const void* values, size_t count,
                     ScalarType source_type, const std::function<double(size_t)>& value_at,
                     std::vector<DimOrderType> dim_order, ScalarType type,
                     TensorShapeDynamism dynamism);
/// Element i of `values` as a double, for make_owned's conversions.
template <typename T>
std::function<double(size_t)> reader_of(const T* values) {
  return [values](size_t i) { return static_cast<double>(values[i]); };
}
}  // namespace tensor_ptr_detail

/// An owning tensor holding `data` (copied), converted to `type` when it
/// differs from T's dtype: make_tensor_ptr({2, 2}, std::vector<float>{1, 2, 3, 4}).
/// Explicit `strides` must be the contiguous strides of `dim_order`.
template <typename T>
TensorPtr make_tensor_ptr(std::vector<SizesType> sizes, std::vector<T> data,
                          std::vector<DimOrderType> dim_order = {},
                          std::vector<StridesType> strides = {},
                          ScalarType type = owned_tensor_detail::scalar_type_of<T>(),
                          TensorShapeDynamism dynamism = kTensorPtrDefaultDynamism) {
  static_assert(!std::is_same_v<T, bool>, "std::vector<bool> is not contiguous; use uint8_t");
  (void)strides;  // Implied by dim_order; upstream checks they agree.
  return tensor_ptr_detail::make_owned(std::move(sizes), data.data(), data.size(),
                                       owned_tensor_detail::scalar_type_of<T>(),
                                       tensor_ptr_detail::reader_of(data.data()),
                                       std::move(dim_order), type, dynamism);
}
template <typename T>
TensorPtr make_tensor_ptr(std::vector<SizesType> sizes, std::initializer_list<T> data,
                          std::vector<DimOrderType> dim_order = {},
                          std::vector<StridesType> strides = {},
                          ScalarType type = owned_tensor_detail::scalar_type_of<T>(),
                          TensorShapeDynamism dynamism = kTensorPtrDefaultDynamism) {
  return make_tensor_ptr(std::move(sizes), std::vector<T>(data), std::move(dim_order),
                         std::move(strides), type, dynamism);
}
/// A 1-D tensor of `data`.
template <typename T>
TensorPtr make_tensor_ptr(std::vector<T> data,
                          ScalarType type = owned_tensor_detail::scalar_type_of<T>(),
                          TensorShapeDynamism dynamism = kTensorPtrDefaultDynamism) {
  const auto n = static_cast<SizesType>(data.size());
  return make_tensor_ptr({n}, std::move(data), {}, {}, type, dynamism);
}
/// A 0-dim tensor holding `value`.
template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
TensorPtr make_tensor_ptr(T value) {
  return tensor_ptr_detail::make_owned({}, &value, 1, owned_tensor_detail::scalar_type_of<T>(),
                                       tensor_ptr_detail::reader_of(&value), {},
                                       owned_tensor_detail::scalar_type_of<T>(),
                                       kTensorPtrDefaultDynamism);
}

/// A deep copy (dtype, sizes, dim order, data) that owns its data.
TensorPtr clone_tensor_ptr(const Tensor& tensor);
inline TensorPtr clone_tensor_ptr(const TensorPtr& tensor) {
  return tensor ? clone_tensor_ptr(*tensor) : TensorPtr();
}

/// Resizes within the tensor's capacity (as Tensor::resize).
Status resize_tensor_ptr(TensorPtr& tensor, const std::vector<SizesType>& sizes);

/// Makers (contiguous, owning, zero-initialised storage first).
TensorPtr empty(std::vector<SizesType> sizes, ScalarType type = ScalarType::kFloat,
                TensorShapeDynamism dynamism = kTensorPtrDefaultDynamism);
TensorPtr full(std::vector<SizesType> sizes, double fill_value,
               ScalarType type = ScalarType::kFloat,
               TensorShapeDynamism dynamism = kTensorPtrDefaultDynamism);
inline TensorPtr zeros(std::vector<SizesType> sizes, ScalarType type = ScalarType::kFloat,
                       TensorShapeDynamism dynamism = kTensorPtrDefaultDynamism) {
  return full(std::move(sizes), 0.0, type, dynamism);
}
inline TensorPtr ones(std::vector<SizesType> sizes, ScalarType type = ScalarType::kFloat,
                      TensorShapeDynamism dynamism = kTensorPtrDefaultDynamism) {
  return full(std::move(sizes), 1.0, type, dynamism);
}
inline TensorPtr scalar_tensor(double value, ScalarType type = ScalarType::kFloat) {
  return full({}, value, type);
}
/// Uniform in [0, 1), standard normal, and integers uniform in [low, high);
/// each call draws from a generator seeded once per process.
TensorPtr rand(std::vector<SizesType> sizes, ScalarType type = ScalarType::kFloat,
               TensorShapeDynamism dynamism = kTensorPtrDefaultDynamism);
TensorPtr randn(std::vector<SizesType> sizes, ScalarType type = ScalarType::kFloat,
                TensorShapeDynamism dynamism = kTensorPtrDefaultDynamism);
TensorPtr randint(int64_t low, int64_t high, std::vector<SizesType> sizes,
                  ScalarType type = ScalarType::kLong,
                  TensorShapeDynamism dynamism = kTensorPtrDefaultDynamism);

/// The makers shaped like `other` (its sizes; its dtype unless given).
TensorPtr empty_like(const TensorPtr& other, std::optional<ScalarType> type = std::nullopt);
TensorPtr zeros_like(const TensorPtr& other, std::optional<ScalarType> type = std::nullopt);
TensorPtr ones_like(const TensorPtr& other, std::optional<ScalarType> type = std::nullopt);
TensorPtr full_like(const TensorPtr& other, double fill_value,
                    std::optional<ScalarType> type = std::nullopt);
TensorPtr rand_like(const TensorPtr& other, std::optional<ScalarType> type = std::nullopt);

}  // namespace torchlight
