#include "runtime/backend/backend_registry.h"

namespace torchlight {

Status BackendRegistry::register_backend(const char* name, const BackendInterface* backend) {
  TL_CHECK_OR_RETURN(name != nullptr && backend != nullptr, Error::kInvalidArgument,
                     "backend registered without a name or implementation");
  TL_CHECK_OR_RETURN(find(name) == nullptr, Error::kInvalidArgument,
                     "backend '%s' is registered twice", name);
  TL_CHECK_OR_RETURN(size_ < kMaxBackends, Error::kOutOfResources,
                     "backend registry is full (%zu entries) registering '%s'", kMaxBackends, name);
  entries_[size_++] = {name, backend};
  return Error::kOk;
}

const BackendInterface* BackendRegistry::find(std::string_view name) const {
  for (size_t i = 0; i < size_; ++i) {
    if (name == entries_[i].name) return entries_[i].backend;
  }
  return nullptr;
}

}  // namespace torchlight
