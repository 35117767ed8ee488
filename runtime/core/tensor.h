// Tensor: a borrowed view of typed, shaped memory.
//
// TensorImpl holds the metadata; every array it points to (sizes, dim order,
// strides, data) is owned by someone else (the method allocator, the caller)
// and must outlive it. Tensor is a copyable handle to a TensorImpl, so
// resizing through one handle is seen through all of them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/scalar_type.h"
#include "runtime/core/span.h"
#include "runtime/core/status.h"

namespace torchlight {

using SizesType = int32_t;     // As in the schema's `sizes: [int]`.
using DimOrderType = uint8_t;  // As in the schema's `dim_order: [ubyte]`.
using StridesType = int64_t;

/// Most dimensions a tensor may have; files asking for more are rejected.
constexpr size_t kMaxTensorDim = 16;

enum class TensorShapeDynamism : uint8_t {
  kStatic = 0,          // Sizes never change.
  kDynamicBound = 1,    // Sizes may shrink/grow within the planned capacity.
  kDynamicUnbound = 2,  // Any size, as far as the bound storage allows.
};

class TensorImpl {
 public:
  /// All pointers are borrowed. `sizes`, `dim_order` and `strides` hold `dim`
  /// entries each and are written by resize(). `data` may be null until bound.
  /// The capacity (elements resize() may use) is the numel of the initial sizes.
  TensorImpl(ScalarType type, size_t dim, SizesType* sizes, void* data, DimOrderType* dim_order,
             StridesType* strides, TensorShapeDynamism dynamism = TensorShapeDynamism::kStatic);

  ScalarType scalar_type() const { return type_; }
  size_t dim() const { return dim_; }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * element_size(type_); }
  /// Elements the storage holds; resize() may not exceed it, except for a
  /// kDynamicUnbound tensor whose storage is not bound (see bind_storage).
  int64_t capacity_numel() const { return capacity_numel_; }
  /// Whether bind_storage() fixed the capacity.
  bool storage_bound() const { return storage_bound_; }
  Span<const SizesType> sizes() const { return {sizes_, dim_}; }
  Span<const DimOrderType> dim_order() const { return {dim_order_, dim_}; }
  Span<const StridesType> strides() const { return {strides_, dim_}; }
  TensorShapeDynamism shape_dynamism() const { return dynamism_; }
  void* mutable_data() const { return data_; }
  const void* data() const { return data_; }
  /// Repoints the data, keeping the capacity: for storage at least as large
  /// (a view of the same elements).
  void set_data(void* data) { data_ = data; }
  /// Binds storage of `capacity_numel` elements (planned memory, a constant,
  /// a caller's buffer): from now on resize() never goes past it, whatever
  /// the dynamism. The current sizes may exceed it until the next resize;
  /// callers binding a smaller buffer resize (or refuse) right after.
  void bind_storage(void* data, int64_t capacity_numel) {
    data_ = data;
    capacity_numel_ = capacity_numel;
    storage_bound_ = true;
  }
  /// Changes the sizes (same rank) and recomputes strides. Errors:
  /// kInvalidArgument for a rank change, a negative size, a STATIC tensor
  /// whose sizes differ, more elements than the capacity (an unbound
  /// kDynamicUnbound tensor grows its capacity instead: its owner rebinds
  /// the data), or sizes whose strides overflow int64. A failed resize
  /// changes nothing.
  Status resize(Span<const SizesType> new_sizes);

 private:
  ScalarType type_;
  size_t dim_;
  SizesType* sizes_;
  void* data_;
  DimOrderType* dim_order_;
  StridesType* strides_;
  TensorShapeDynamism dynamism_;
  int64_t numel_;
  int64_t capacity_numel_;
  bool storage_bound_ = false;
};

/// A copyable handle to a TensorImpl. A default-constructed Tensor is
/// "undefined" and stands for None in optional-tensor positions.
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(TensorImpl* impl) : impl_(impl) {}

  bool defined() const { return impl_ != nullptr; }
  TensorImpl* impl() const { return impl_; }

  ScalarType scalar_type() const { return impl_->scalar_type(); }
  size_t dim() const { return impl_->dim(); }
  int64_t numel() const { return impl_->numel(); }
  size_t nbytes() const { return impl_->nbytes(); }
  size_t element_size() const { return torchlight::element_size(impl_->scalar_type()); }
  Span<const SizesType> sizes() const { return impl_->sizes(); }
  SizesType size(size_t d) const { return impl_->sizes()[d]; }
  Span<const DimOrderType> dim_order() const { return impl_->dim_order(); }
  Span<const StridesType> strides() const { return impl_->strides(); }
  TensorShapeDynamism shape_dynamism() const { return impl_->shape_dynamism(); }

  template <typename T = void>
  const T* const_data_ptr() const { return static_cast<const T*>(impl_->data()); }
  template <typename T = void>
  T* mutable_data_ptr() const { return static_cast<T*>(impl_->mutable_data()); }
  /// Upstream's older spelling of mutable_data_ptr.
  template <typename T = void>
  T* data_ptr() const { return mutable_data_ptr<T>(); }

  Status resize(Span<const SizesType> new_sizes) const { return impl_->resize(new_sizes); }

 private:
  TensorImpl* impl_ = nullptr;
};

/// Product of sizes into *numel. False on a negative size or int64 overflow.
bool compute_numel(Span<const SizesType> sizes, int64_t* numel);

/// Strides (in elements) for `sizes` laid out in `dim_order`. False, with
/// `strides` untouched, when `dim_order` is not a permutation of 0..n-1, n is
/// above kMaxTensorDim, or a stride overflows int64 (possible for zero-numel
/// shapes, whose size-0 dims count as 1).
bool compute_strides(Span<const SizesType> sizes, Span<const DimOrderType> dim_order,
                     StridesType* strides);

/// True when dim_order is 0, 1, ..., n-1.
bool is_contiguous_dim_order(Span<const DimOrderType> dim_order);
/// True when dim_order is 0, 2, 3, 1 (NHWC for a 4-D tensor).
bool is_channels_last_dim_order(Span<const DimOrderType> dim_order);

/// Writes "[2, 3, 4]" into `out` (always NUL-terminated). Returns `out`.
const char* format_sizes(Span<const SizesType> sizes, char* out, size_t out_size);

}  // namespace torchlight
