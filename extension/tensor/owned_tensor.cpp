#include "extension/tensor/owned_tensor.h"

#include <cstring>
#include <utility>

namespace torchlight {
namespace {

// posix_memalign'ed block of at least one byte, so data is never null (a
// zero-element tensor still has a valid, unique data pointer).
uint8_t* allocate_data(size_t nbytes) {
  void* p = nullptr;
  if (::posix_memalign(&p, OwnedTensor::kDataAlignment, nbytes == 0 ? 1 : nbytes) != 0) {
    return nullptr;
  }
  return static_cast<uint8_t*>(p);
}

// Checks sizes and computes the byte count for `type`.
Status checked_nbytes(ScalarType type, Span<const SizesType> sizes, size_t* nbytes) {
  char shape[160];
  TL_CHECK_OR_RETURN(is_valid(type), Error::kInvalidArgument, "invalid dtype %d",
                     static_cast<int>(type));
  TL_CHECK_OR_RETURN(sizes.size() <= kMaxTensorDim, Error::kInvalidArgument,
                     "a tensor has at most %zu dims, got %zu", kMaxTensorDim, sizes.size());
  int64_t numel = 0;
  TL_CHECK_OR_RETURN(compute_numel(sizes, &numel), Error::kInvalidArgument,
                     "invalid sizes %s: negative, or the element count overflows",
                     format_sizes(sizes, shape, sizeof(shape)));
  TL_CHECK_OR_RETURN(!__builtin_mul_overflow(static_cast<uint64_t>(numel), element_size(type),
                                             nbytes),
                     Error::kInvalidArgument,
                     "%s tensor of sizes %s needs more than SIZE_MAX bytes",
                     to_string(type), format_sizes(sizes, shape, sizeof(shape)));
  return Error::kOk;
}

}  // namespace

Result<OwnedTensor> OwnedTensor::make(ScalarType type, std::vector<SizesType> sizes,
                                      TensorShapeDynamism dynamism) {
  std::vector<DimOrderType> dim_order(sizes.size());
  for (size_t i = 0; i < dim_order.size(); ++i) dim_order[i] = static_cast<DimOrderType>(i);
  return make_with_dim_order(type, std::move(sizes), std::move(dim_order), dynamism);
}

Result<OwnedTensor> OwnedTensor::make_with_dim_order(ScalarType type, std::vector<SizesType> sizes,
                                                     std::vector<DimOrderType> dim_order,
                                                     TensorShapeDynamism dynamism) {
  size_t nbytes = 0;
  TL_RETURN_IF_ERROR(checked_nbytes(type, {sizes.data(), sizes.size()}, &nbytes));
  OwnedTensor t;
  t.sizes_ = std::move(sizes);
  t.dim_order_ = std::move(dim_order);
  t.strides_.resize(t.sizes_.size());
  char text[160];
  bool is_permutation = t.dim_order_.size() == t.sizes_.size();
  bool seen[kMaxTensorDim] = {};
  for (size_t i = 0; is_permutation && i < t.dim_order_.size(); ++i) {
    const DimOrderType d = t.dim_order_[i];
    is_permutation = d < t.dim_order_.size() && !seen[d];
    if (is_permutation) seen[d] = true;
  }
  if (!is_permutation) {
    std::vector<SizesType> as_sizes(t.dim_order_.begin(), t.dim_order_.end());
    return Status::error(Error::kInvalidArgument,
                         "dim_order %s is not a permutation of 0..%zu",
                         format_sizes({as_sizes.data(), as_sizes.size()}, text, sizeof(text)),
                         t.sizes_.empty() ? size_t{0} : t.sizes_.size() - 1);
  }
  // Zero-element shapes pass the byte-count check but can still have
  // strides beyond int64 (size-0 dims count as 1 in strides).
  if (!compute_strides({t.sizes_.data(), t.sizes_.size()},
                       {t.dim_order_.data(), t.dim_order_.size()}, t.strides_.data())) {
    return Status::error(Error::kInvalidArgument, "the strides of sizes %s overflow int64",
                         format_sizes({t.sizes_.data(), t.sizes_.size()}, text, sizeof(text)));
  }
  t.data_.reset(allocate_data(nbytes));
  if (t.data_ == nullptr) {
    return Status::error(Error::kMemoryAllocationFailed,
                         "cannot allocate %zu bytes for a %s tensor", nbytes, to_string(type));
  }
  std::memset(t.data_.get(), 0, nbytes);
  t.capacity_bytes_ = nbytes;
  t.impl_ = std::make_unique<TensorImpl>(type, t.sizes_.size(), t.sizes_.data(), t.data_.get(),
                                         t.dim_order_.data(), t.strides_.data(), dynamism);
  return t;
}

Result<OwnedTensor> OwnedTensor::from_data(ScalarType type, std::vector<SizesType> sizes,
                                           const void* data, size_t nbytes,
                                           TensorShapeDynamism dynamism) {
  TL_ASSIGN_OR_RETURN(OwnedTensor t, make(type, std::move(sizes), dynamism));
  if (nbytes != t.nbytes()) {
    char shape[160];
    return Status::error(Error::kInvalidArgument,
                         "a %s tensor of sizes %s holds %zu bytes, but %zu were given",
                         to_string(type), format_sizes(t.sizes(), shape, sizeof(shape)),
                         t.nbytes(), nbytes);
  }
  TL_CHECK_OR_RETURN(data != nullptr || nbytes == 0, Error::kInvalidArgument,
                     "from_data: data is null but %zu bytes were promised", nbytes);
  if (nbytes > 0) std::memcpy(t.data_.get(), data, nbytes);
  return t;
}

Result<OwnedTensor> OwnedTensor::copy_of(const Tensor& tensor) {
  TL_CHECK_OR_RETURN(tensor.defined(), Error::kInvalidArgument, "copy_of: tensor is undefined");
  TL_CHECK_OR_RETURN(tensor.const_data_ptr() != nullptr || tensor.nbytes() == 0,
                     Error::kInvalidArgument, "copy_of: tensor has %lld elements but no data",
                     static_cast<long long>(tensor.numel()));
  std::vector<SizesType> sizes(tensor.sizes().begin(), tensor.sizes().end());
  std::vector<DimOrderType> dim_order(tensor.dim_order().begin(), tensor.dim_order().end());
  TL_ASSIGN_OR_RETURN(OwnedTensor t, make_with_dim_order(tensor.scalar_type(), std::move(sizes),
                                                         std::move(dim_order),
                                                         tensor.shape_dynamism()));
  if (t.nbytes() > 0) std::memcpy(t.data_.get(), tensor.const_data_ptr(), t.nbytes());
  return t;
}

Status OwnedTensor::resize(Span<const SizesType> new_sizes) {
  TL_CHECK_OR_RETURN(impl_ != nullptr, Error::kInvalidState, "resize of a moved-from OwnedTensor");
  size_t new_nbytes = 0;
  TL_RETURN_IF_ERROR(checked_nbytes(impl_->scalar_type(), new_sizes, &new_nbytes));
  uint8_t* grown = nullptr;
  if (impl_->shape_dynamism() == TensorShapeDynamism::kDynamicUnbound &&
      new_nbytes > capacity_bytes_) {
    grown = allocate_data(new_nbytes);
    TL_CHECK_OR_RETURN(grown != nullptr, Error::kMemoryAllocationFailed,
                       "cannot grow a %s tensor to %zu bytes", to_string(impl_->scalar_type()),
                       new_nbytes);
  }
  Status status = impl_->resize(new_sizes);
  if (!status.ok()) {
    std::free(grown);
    return status;
  }
  if (grown != nullptr) {
    std::memcpy(grown, data_.get(), capacity_bytes_);
    std::memset(grown + capacity_bytes_, 0, new_nbytes - capacity_bytes_);
    data_.reset(grown);
    capacity_bytes_ = new_nbytes;
    impl_->set_data(data_.get());
  }
  return Error::kOk;
}

}  // namespace torchlight
