// NamedDataMap: blobs looked up by a string key, such as a program's named
// data (`Program.named_data`), where upstream's newer exporters put delegate
// constants. Backends read it at init through BackendInitContext. The
// methods are upstream's (runtime/core/named_data_map.h): get_tensor_layout,
// get_data, load_data_into, get_num_keys, get_key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/core/freeable_buffer.h"
#include "runtime/core/result.h"
#include "runtime/core/tensor_layout.h"

namespace torchlight {

class NamedDataMap {
 public:
  virtual ~NamedDataMap() = default;
  /// The tensor layout of the blob stored under `key`. Errors: kNotFound
  /// (no such key), kNotSupported (the map keeps opaque blobs, as a
  /// program's named data does).
  virtual Result<TensorLayout> get_tensor_layout(std::string_view key) const = 0;
  /// The blob stored under `key`; the caller keeps the buffer as long as it
  /// reads it. Errors: kNotFound (no such key, the message names it), and
  /// the loader's errors.
  virtual Result<FreeableBuffer> get_data(std::string_view key) const = 0;
  /// Copies the first `size` bytes of the blob under `key` into `buffer`
  /// (at least `size` bytes). Errors: kNotFound, kInvalidArgument (`size`
  /// passes the blob's end, or a null buffer), and the loader's errors.
  virtual Status load_data_into(std::string_view key, void* buffer, size_t size) const = 0;
  /// How many keys the map holds.
  virtual Result<uint32_t> get_num_keys() const = 0;
  /// Key `index` (< get_num_keys()), valid as long as the map. Errors:
  /// kInvalidArgument (index out of range).
  virtual Result<const char*> get_key(uint32_t index) const = 0;
};

}  // namespace torchlight
