// Argument checks shared by the neural-network kernels (matmul, convolution,
// pooling, normalization): rank, dtype agreement, presence of data, and
// turning schema int lists into sizes. Each returns a Status naming the
// argument; the TL_KERNEL_* macros add the operator. Header-only, so the
// kernels that use it need no change to the util library's sources.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "kernels/portable/util/kernel_args.h"
#include "runtime/core/result.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/span.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace torchlight::portable {

/// Errors: kInvalidArgument unless `t` has rank `dim`, naming the argument,
/// its shape and `what` (e.g. "a matrix").
inline Status check_rank(const NamedTensor& t, size_t dim, const char* what) {
  if (t.tensor.dim() == dim) return Error::kOk;
  char shape[128];
  return Status::error(Error::kInvalidArgument,
                       "argument '%s' must be %s (%zu-D), got shape %s (%zu-D)", t.name, what, dim,
                       format_sizes(t.tensor.sizes(), shape, sizeof(shape)), t.tensor.dim());
}

/// Errors: kInvalidType unless `t` has dtype `type`, naming `t`, its dtype
/// and `type` together with `reference` (the argument `type` came from).
inline Status check_same_dtype(const NamedTensor& t, ScalarType type, const char* reference) {
  TL_CHECK_OR_RETURN(t.tensor.scalar_type() == type, Error::kInvalidType,
                     "argument '%s' has dtype %s, expected %s (the dtype of '%s')", t.name,
                     to_string(t.tensor.scalar_type()), to_string(type), reference);
  return Error::kOk;
}

/// Errors: kInvalidArgument when `t` has elements but no data pointer.
inline Status check_has_data(const NamedTensor& t) {
  TL_CHECK_OR_RETURN(t.tensor.numel() == 0 || t.tensor.const_data_ptr() != nullptr,
                     Error::kInvalidArgument, "argument '%s' has %lld elements but no data",
                     t.name, static_cast<long long>(t.tensor.numel()));
  return Error::kOk;
}

/// `values` as SizesType (the out tensors' size type), into `sizes`.
/// Errors: kInvalidArgument naming `what` when a size is negative or does
/// not fit SizesType.
inline Status to_sizes(Span<const int64_t> values, const char* what, SizesType* sizes) {
  for (size_t i = 0; i < values.size(); ++i) {
    TL_CHECK_OR_RETURN(values[i] >= 0 && values[i] <= std::numeric_limits<SizesType>::max(),
                       Error::kInvalidArgument,
                       "%s has size %lld at dimension %zu, expected 0 to %d",
                       what, static_cast<long long>(values[i]), i,
                       std::numeric_limits<SizesType>::max());
    sizes[i] = static_cast<SizesType>(values[i]);
  }
  return Error::kOk;
}

/// An int-list argument of `n` entries, where ATen also accepts one entry
/// (used for every dimension) and, when `fallback` is not null, an empty
/// list (meaning `fallback`, itself `n` entries). Writes `n` values to
/// `values`. Errors: kInvalidArgument naming `name`, the length found and
/// the lengths allowed.
inline Status expand_int_list(Span<const int64_t> list, size_t n, const char* name,
                              const int64_t* fallback, int64_t* values) {
  if (list.size() == n) {
    for (size_t i = 0; i < n; ++i) values[i] = list[i];
  } else if (list.size() == 1) {
    for (size_t i = 0; i < n; ++i) values[i] = list[0];
  } else if (list.empty() && fallback != nullptr) {
    for (size_t i = 0; i < n; ++i) values[i] = fallback[i];
  } else {
    return Status::error(Error::kInvalidArgument,
                         "argument '%s' has %zu values, expected %s1 or %zu", name, list.size(),
                         fallback != nullptr ? "0, " : "", n);
  }
  return Error::kOk;
}

}  // namespace torchlight::portable
