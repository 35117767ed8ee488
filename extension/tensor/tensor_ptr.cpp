#include "extension/tensor/tensor_ptr.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "extension/tensor/tensor_fill.h"
#include "runtime/platform/log.h"

namespace torchlight {
namespace {

// What a TensorPtr's control block holds: the storage and the handle the
// shared_ptr points at (aliasing constructor), freed together.
struct OwnedHolder {
  explicit OwnedHolder(OwnedTensor t) : owned(std::move(t)), tensor(owned.tensor()) {}
  OwnedTensor owned;
  Tensor tensor;
};

struct BlobHolder {
  std::vector<SizesType> sizes;
  std::vector<DimOrderType> dim_order;
  std::vector<StridesType> strides;
  std::unique_ptr<TensorImpl> impl;
  Tensor tensor;
};

TensorPtr share(OwnedTensor owned) {
  auto holder = std::make_shared<OwnedHolder>(std::move(owned));
  return TensorPtr(holder, &holder->tensor);
}

TensorPtr fail(const Status& status, const char* what) {
  TL_LOG(kTlLogError, "%s: %s", what, status.message());
  return nullptr;
}

// A contiguous owning tensor with every element set by `value_at(i)`.
// A contiguous owning tensor with every element set by `value()`.
TensorPtr generate(std::vector<SizesType> sizes, ScalarType type, TensorShapeDynamism dynamism,
                   const char* what, const std::function<double()>& value) {
  Result<OwnedTensor> made = OwnedTensor::make(type, std::move(sizes), dynamism);
  if (!made.ok()) return fail(made.status(), what);
  OwnedTensor owned = std::move(made.get());
  const Status filled = fill_values(owned.tensor(), value);
  if (!filled.ok()) return fail(filled, what);
  return share(std::move(owned));
}

std::mt19937_64& generator() {
  static std::mt19937_64 engine(std::random_device{}());
  return engine;
}

}  // namespace

TensorPtr from_blob(void* data, std::vector<SizesType> sizes, ScalarType type,
                    TensorShapeDynamism dynamism) {
  return from_blob(data, std::move(sizes), {}, type, dynamism);
}

TensorPtr from_blob(void* data, std::vector<SizesType> sizes, std::vector<StridesType> strides,
                    ScalarType type, TensorShapeDynamism dynamism) {
  if (!is_valid(type)) return fail(Error::kInvalidArgument, "from_blob: invalid dtype");
  auto holder = std::make_shared<BlobHolder>();
  holder->sizes = std::move(sizes);
  const size_t dim = holder->sizes.size();
  if (dim > kMaxTensorDim) {
    return fail(Status::error(Error::kInvalidArgument, "%zu dims, at most %zu", dim,
                              static_cast<size_t>(kMaxTensorDim)),
                "from_blob");
  }
  int64_t numel = 0;
  if (!compute_numel(Span<const SizesType>(holder->sizes.data(), dim), &numel)) {
    return fail(Error::kInvalidArgument, "from_blob: a size is negative or the count overflows");
  }
  holder->dim_order.resize(dim);
  if (strides.empty()) {
    for (size_t d = 0; d < dim; ++d) holder->dim_order[d] = static_cast<DimOrderType>(d);
    holder->strides.resize(dim);
    if (!compute_strides(Span<const SizesType>(holder->sizes.data(), dim),
                         Span<const DimOrderType>(holder->dim_order.data(), dim),
                         holder->strides.data())) {
      return fail(Error::kInvalidArgument, "from_blob: sizes overflow or are negative");
    }
  } else {
    if (strides.size() != dim) {
      return fail(Status::error(Error::kInvalidArgument, "%zu strides for %zu dims",
                                strides.size(), dim),
                  "from_blob");
    }
    // The dim order is the dims sorted by decreasing stride (ties keep order).
    for (size_t d = 0; d < dim; ++d) holder->dim_order[d] = static_cast<DimOrderType>(d);
    std::stable_sort(holder->dim_order.begin(), holder->dim_order.end(),
                     [&](DimOrderType a, DimOrderType b) { return strides[a] > strides[b]; });
    holder->strides = std::move(strides);
  }
  holder->impl = std::make_unique<TensorImpl>(type, dim, holder->sizes.data(), data,
                                              holder->dim_order.data(), holder->strides.data(),
                                              dynamism);
  holder->tensor = Tensor(holder->impl.get());
  return TensorPtr(holder, &holder->tensor);
}

namespace tensor_ptr_detail {

TensorPtr make_owned(std::vector<SizesType> sizes, const void* values, size_t count,
                     ScalarType source_type, const std::function<double(size_t)>& value_at,
                     std::vector<DimOrderType> dim_order, ScalarType type,
                     TensorShapeDynamism dynamism) {
  Result<OwnedTensor> made =
      dim_order.empty() ? OwnedTensor::make(type, std::move(sizes), dynamism)
                        : OwnedTensor::make_with_dim_order(type, std::move(sizes),
                                                           std::move(dim_order), dynamism);
  if (!made.ok()) return fail(made.status(), "make_tensor_ptr");
  OwnedTensor owned = std::move(made.get());
  if (static_cast<size_t>(owned.numel()) != count) {
    return fail(Status::error(Error::kInvalidArgument,
                              "%zu values given for a shape of %lld elements", count,
                              static_cast<long long>(owned.numel())),
                "make_tensor_ptr");
  }
  if (source_type == type) {
    if (count != 0) {
      std::memcpy(owned.tensor().mutable_data_ptr(), values, count * element_size(type));
    }
    return share(std::move(owned));
  }
  size_t next = 0;
  const Status filled = fill_values(owned.tensor(), [&] { return value_at(next++); });
  if (!filled.ok()) return fail(filled, "make_tensor_ptr");
  return share(std::move(owned));
}

}  // namespace tensor_ptr_detail

TensorPtr clone_tensor_ptr(const Tensor& tensor) {
  Result<OwnedTensor> copy = OwnedTensor::copy_of(tensor);
  if (!copy.ok()) return fail(copy.status(), "clone_tensor_ptr");
  return share(std::move(copy.get()));
}

Status resize_tensor_ptr(TensorPtr& tensor, const std::vector<SizesType>& sizes) {
  TL_CHECK_OR_RETURN(tensor != nullptr, Error::kInvalidArgument, "resize_tensor_ptr: null tensor");
  return tensor->resize(Span<const SizesType>(sizes.data(), sizes.size()));
}

TensorPtr empty(std::vector<SizesType> sizes, ScalarType type, TensorShapeDynamism dynamism) {
  Result<OwnedTensor> made = OwnedTensor::make(type, std::move(sizes), dynamism);
  if (!made.ok()) return fail(made.status(), "empty");
  return share(std::move(made.get()));
}

TensorPtr full(std::vector<SizesType> sizes, double fill_value, ScalarType type,
               TensorShapeDynamism dynamism) {
  return generate(std::move(sizes), type, dynamism, "full", [&] { return fill_value; });
}

TensorPtr rand(std::vector<SizesType> sizes, ScalarType type, TensorShapeDynamism dynamism) {
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  return generate(std::move(sizes), type, dynamism, "rand",
                  [&] { return uniform(generator()); });
}

TensorPtr randn(std::vector<SizesType> sizes, ScalarType type, TensorShapeDynamism dynamism) {
  std::normal_distribution<double> normal(0.0, 1.0);
  return generate(std::move(sizes), type, dynamism, "randn", [&] { return normal(generator()); });
}

TensorPtr randint(int64_t low, int64_t high, std::vector<SizesType> sizes, ScalarType type,
                  TensorShapeDynamism dynamism) {
  if (high <= low) {
    return fail(Status::error(Error::kInvalidArgument, "empty range [%lld, %lld)",
                              static_cast<long long>(low), static_cast<long long>(high)),
                "randint");
  }
  std::uniform_int_distribution<int64_t> uniform(low, high - 1);
  return generate(std::move(sizes), type, dynamism, "randint",
                  [&] { return static_cast<double>(uniform(generator())); });
}

namespace {
std::vector<SizesType> sizes_of(const TensorPtr& other) {
  if (other == nullptr) return {};
  return std::vector<SizesType>(other->sizes().begin(), other->sizes().end());
}
ScalarType type_of(const TensorPtr& other, std::optional<ScalarType> type) {
  return type ? *type : (other != nullptr ? other->scalar_type() : ScalarType::kFloat);
}
}  // namespace

TensorPtr empty_like(const TensorPtr& other, std::optional<ScalarType> type) {
  return empty(sizes_of(other), type_of(other, type));
}
TensorPtr zeros_like(const TensorPtr& other, std::optional<ScalarType> type) {
  return zeros(sizes_of(other), type_of(other, type));
}
TensorPtr ones_like(const TensorPtr& other, std::optional<ScalarType> type) {
  return ones(sizes_of(other), type_of(other, type));
}
TensorPtr full_like(const TensorPtr& other, double fill_value, std::optional<ScalarType> type) {
  return full(sizes_of(other), fill_value, type_of(other, type));
}
TensorPtr rand_like(const TensorPtr& other, std::optional<ScalarType> type) {
  return rand(sizes_of(other), type_of(other, type));
}

}  // namespace torchlight
