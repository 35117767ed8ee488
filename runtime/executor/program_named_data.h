// ProgramNamedData: a Program's named data (`Program.named_data`, one
// segment per key) as the NamedDataMap backends read at init.
#pragma once

#include "runtime/core/named_data_map.h"
#include "runtime/executor/program.h"

namespace torchlight {

class ProgramNamedData final : public NamedDataMap {
 public:
  /// `program` must outlive this map.
  explicit ProgramNamedData(const Program& program) : program_(program) {}
  /// A program stores opaque blobs (upstream's PteDataMap says
  /// NotImplemented): kNotSupported for a key it has, kNotFound otherwise.
  Result<TensorLayout> get_tensor_layout(std::string_view key) const override {
    TL_RETURN_IF_ERROR(program_.find_named_data(key));
    return Status::error(Error::kNotSupported,
                         "named data '%.*s' of '%s' is an opaque blob: a program stores no "
                         "tensor layout for it",
                         static_cast<int>(key.size()), key.data(), program_.loader_name());
  }
  Result<FreeableBuffer> get_data(std::string_view key) const override {
    return program_.named_data(key);
  }
  Status load_data_into(std::string_view key, void* buffer, size_t size) const override {
    return program_.load_named_data_into(key, buffer, size);
  }
  Result<uint32_t> get_num_keys() const override {
    return static_cast<uint32_t>(program_.num_named_data());
  }
  Result<const char*> get_key(uint32_t index) const override {
    return program_.named_data_key(index);
  }

 private:
  const Program& program_;
};

}  // namespace torchlight
