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
  Result<FreeableBuffer> get_data(std::string_view key) const override {
    return program_.named_data(key);
  }
  size_t get_num_keys() const override { return program_.num_named_data(); }

 private:
  const Program& program_;
};

}  // namespace torchlight
