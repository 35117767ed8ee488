#include "kernels/portable/util/dim_index.h"

#include <cstdint>

#include "runtime/core/result.h"

namespace torchlight::portable {

Status wrap_dim(int64_t dim, size_t rank, const char* name, size_t* out) {
  const int64_t n = rank == 0 ? 1 : static_cast<int64_t>(rank);
  TL_CHECK_OR_RETURN(dim >= -n && dim < n, Error::kInvalidArgument,
                     "argument '%s' is %lld, out of range for a %zu-d tensor (expected %lld..%lld)",
                     name, static_cast<long long>(dim), rank, static_cast<long long>(-n),
                     static_cast<long long>(n - 1));
  *out = static_cast<size_t>(dim < 0 ? dim + n : dim);
  return Error::kOk;
}

Status normalize_slice(const EValue& start, const EValue& end, int64_t step, int64_t size,
                       int64_t* out_start, int64_t* out_length) {
  TL_CHECK_OR_RETURN(step > 0, Error::kInvalidArgument,
                     "argument 'step' is %lld; the slice step must be positive",
                     static_cast<long long>(step));
  slice_bounds(start, end, step, size, out_start, out_length);
  return Error::kOk;
}

Status infer_view_shape(Span<const int64_t> size, int64_t numel, ShapeBuffer* shape) {
  TL_CHECK_OR_RETURN(size.size() <= kMaxTensorDim, Error::kInvalidArgument,
                     "argument 'size' has %zu entries, more than %zu", size.size(), kMaxTensorDim);
  int64_t known = 1;
  size_t infer = kMaxTensorDim;
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i] == -1) {
      TL_CHECK_OR_RETURN(infer == kMaxTensorDim, Error::kInvalidArgument,
                         "argument 'size' has more than one -1; only one dimension can be "
                         "inferred");
      infer = i;
      continue;
    }
    TL_CHECK_OR_RETURN(size[i] >= 0 && size[i] <= INT32_MAX, Error::kInvalidArgument,
                       "argument 'size' has invalid size %lld at dimension %zu",
                       static_cast<long long>(size[i]), i);
    // numel fits int64, so a product above it just means "does not match".
    known = (size[i] != 0 && known > INT64_MAX / size[i]) ? INT64_MAX : known * size[i];
    shape->sizes[i] = static_cast<SizesType>(size[i]);
  }
  shape->dim = size.size();
  if (infer != kMaxTensorDim) {
    TL_CHECK_OR_RETURN(known != 0, Error::kInvalidArgument,
                       "argument 'size' has a -1 next to a 0 size: the -1 is ambiguous for %lld "
                       "elements",
                       static_cast<long long>(numel));
    TL_CHECK_OR_RETURN(numel % known == 0 && numel / known <= INT32_MAX, Error::kInvalidArgument,
                       "argument 'size' does not fit 'self' with %lld elements",
                       static_cast<long long>(numel));
    shape->sizes[infer] = static_cast<SizesType>(numel / known);
    return Error::kOk;
  }
  TL_CHECK_OR_RETURN(known == numel, Error::kInvalidArgument,
                     "argument 'size' has %lld elements, but 'self' has %lld",
                     static_cast<long long>(known), static_cast<long long>(numel));
  return Error::kOk;
}

Status check_list_fits_rank(size_t length, const char* name) {
  TL_CHECK_OR_RETURN(length <= kMaxTensorDim, Error::kInvalidArgument,
                     "argument '%s' has %zu entries, more than the %zu dimensions a tensor "
                     "may have",
                     name, length, kMaxTensorDim);
  return Error::kOk;
}

Status sizes_from_list(Span<const int64_t> list, const char* name, ShapeBuffer* out) {
  TL_RETURN_IF_ERROR(check_list_fits_rank(list.size(), name));
  for (size_t i = 0; i < list.size(); ++i) {
    TL_CHECK_OR_RETURN(list[i] >= 0 && list[i] <= INT32_MAX, Error::kInvalidArgument,
                       "argument '%s' has size %lld at position %zu; sizes must be in 0..%d", name,
                       static_cast<long long>(list[i]), i, INT32_MAX);
    out->sizes[i] = static_cast<SizesType>(list[i]);
  }
  out->dim = list.size();
  return Error::kOk;
}

Status checked_numel(Span<const SizesType> shape, const char* name, int64_t* numel) {
  TL_CHECK_OR_RETURN(compute_numel(shape, numel), Error::kInvalidArgument,
                     "the shape of '%s' has a negative size or too many elements", name);
  return Error::kOk;
}

Status check_index_dtype(const NamedTensor& index, bool allow_int32) {
  const ScalarType type = index.tensor.scalar_type();
  const bool ok = type == ScalarType::kLong || (allow_int32 && type == ScalarType::kInt);
  TL_CHECK_OR_RETURN(ok, Error::kInvalidType, "argument '%s' has dtype %s; expected %s", index.name,
                     to_string(type), allow_int32 ? "int64 or int32" : "int64");
  return Error::kOk;
}

Status check_index_value(int64_t value, int64_t size, size_t dim, bool allow_negative,
                         const char* name, int64_t* wrapped) {
  const bool ok = value < size && (value >= 0 || (allow_negative && value >= -size));
  TL_CHECK_OR_RETURN(ok, Error::kInvalidArgument,
                     "index %lld is out of bounds for dimension %zu with size %lld (argument '%s')",
                     static_cast<long long>(value), dim, static_cast<long long>(size), name);
  *wrapped = value < 0 ? value + size : value;
  return Error::kOk;
}

}  // namespace torchlight::portable
