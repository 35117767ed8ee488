// Upstream path; see compat/README.md.
#pragma once

#include <executorch/runtime/core/evalue.h>

#include "extension/tensor/tensor_ptr.h"

namespace executorch::extension {
using ::torchlight::clone_tensor_ptr;
using ::torchlight::make_tensor_ptr;
using ::torchlight::resize_tensor_ptr;
using ::torchlight::TensorPtr;
}  // namespace executorch::extension
