// Bounds check shared by the data loaders: is [offset, offset + size) inside
// data of `total` bytes? Written so that offset + size never wraps.
#pragma once

#include <cstddef>

#include "runtime/core/status.h"

namespace torchlight {

/// Ok when [offset, offset + size) lies within [0, total). Error:
/// kInvalidArgument naming `name` (the file path), the offset, the size and
/// the total. A size-0 range at offset == total is in bounds.
inline Status check_load_range(const char* name, size_t offset, size_t size, size_t total) {
  if (offset > total || size > total - offset) {
    return Status::error(Error::kInvalidArgument,
                         "'%s': cannot load %zu bytes at offset %zu: the data is only %zu bytes",
                         name, size, offset, total);
  }
  return Error::kOk;
}

}  // namespace torchlight
