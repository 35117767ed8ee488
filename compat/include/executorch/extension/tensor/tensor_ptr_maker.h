// Upstream path; see compat/README.md.
#pragma once

#include <executorch/extension/tensor/tensor_ptr.h>

namespace executorch::extension {
using ::torchlight::empty;
using ::torchlight::empty_like;
using ::torchlight::from_blob;
using ::torchlight::full;
using ::torchlight::full_like;
using ::torchlight::ones;
using ::torchlight::ones_like;
using ::torchlight::rand;
using ::torchlight::rand_like;
using ::torchlight::randint;
using ::torchlight::randn;
using ::torchlight::scalar_tensor;
using ::torchlight::zeros;
using ::torchlight::zeros_like;
}  // namespace executorch::extension
