// Upstream path; see compat/README.md.
#pragma once

#include <optional>
#include <string_view>

#include "extension/kernel_util/scalar.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/span.h"
#include "runtime/core/tensor.h"

namespace executorch::aten {
using ::torchlight::DimOrderType;
using ::torchlight::Scalar;
using ::torchlight::ScalarType;
using ::torchlight::SizesType;
using ::torchlight::StridesType;
using ::torchlight::Tensor;
using ::torchlight::TensorImpl;
using ::torchlight::TensorShapeDynamism;

// The argument types of unboxed kernels (extension/kernel_util/unboxed_kernel.h).
template <typename T>
using ArrayRef = ::torchlight::Span<const T>;
using IntArrayRef = ArrayRef<int64_t>;
using TensorList = ArrayRef<Tensor>;
template <typename T>
using optional = std::optional<T>;
using std::nullopt;
using string_view = std::string_view;
}  // namespace executorch::aten

// Upstream's older spelling, still common in kernel code.
namespace exec_aten = ::executorch::aten;
