// NamedDataMap: blobs looked up by a string key, such as a program's named
// data (`Program.named_data`), where upstream's newer exporters put delegate
// constants. Backends read it at init through BackendInitContext.
#pragma once

#include <cstddef>
#include <string_view>

#include "runtime/core/freeable_buffer.h"
#include "runtime/core/result.h"

namespace torchlight {

class NamedDataMap {
 public:
  virtual ~NamedDataMap() = default;
  /// The blob stored under `key`; the caller keeps the buffer as long as it
  /// reads it. Errors: kNotFound (no such key, the message names it), and
  /// the loader's errors.
  virtual Result<FreeableBuffer> get_data(std::string_view key) const = 0;
  virtual size_t get_num_keys() const = 0;
};

}  // namespace torchlight
