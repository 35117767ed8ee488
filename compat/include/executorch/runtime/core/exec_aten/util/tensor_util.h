// Upstream path; see compat/README.md. Only resize_tensor so far.
#pragma once

#include <executorch/runtime/core/error.h>
#include <executorch/runtime/core/exec_aten/exec_aten.h>

namespace executorch::runtime {

/// Resizes `t` to `sizes` within its capacity; Error::Ok or why not.
inline Error resize_tensor(const ::executorch::aten::Tensor& t, ::executorch::aten::ArrayRef<::executorch::aten::SizesType> sizes) {
  return t.resize(sizes).code();
}

}  // namespace executorch::runtime
