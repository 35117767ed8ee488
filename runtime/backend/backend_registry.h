// BackendRegistry: backend id (as written in the program, e.g.
// "XnnpackBackend") to implementation. Fixed capacity, explicit registration.
#pragma once

#include <cstddef>
#include <string_view>

#include "runtime/backend/backend_interface.h"

namespace torchlight {

class BackendRegistry {
 public:
  static constexpr size_t kMaxBackends = 16;

  /// `name` (kept as a pointer, not copied) and `backend` must outlive the
  /// registry. Errors: kInvalidArgument for a null name or backend or a
  /// duplicate name, kOutOfResources when full.
  Status register_backend(const char* name, const BackendInterface* backend);

  /// The backend registered under `name`, or null.
  const BackendInterface* find(std::string_view name) const;

  size_t size() const { return size_; }
  const char* name(size_t i) const { return entries_[i].name; }

 private:
  struct Entry {
    const char* name = nullptr;
    const BackendInterface* backend = nullptr;
  };
  Entry entries_[kMaxBackends];
  size_t size_ = 0;
};

}  // namespace torchlight
