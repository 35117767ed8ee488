// Upstream path; see compat/README.md.
#pragma once

#include "runtime/core/scalar_type.h"
#include "runtime/core/tensor.h"

namespace executorch::aten {
using ::torchlight::DimOrderType;
using ::torchlight::ScalarType;
using ::torchlight::SizesType;
using ::torchlight::StridesType;
using ::torchlight::Tensor;
using ::torchlight::TensorImpl;
using ::torchlight::TensorShapeDynamism;
}  // namespace executorch::aten
