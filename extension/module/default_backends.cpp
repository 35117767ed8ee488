#include "extension/module/default_backends.h"

#include "backends/xnnpack/xnnpack_backend.h"

namespace torchlight {

const BackendRegistry* default_backends() {
  // Function-local static: built once, thread-safely, on first call.
  static const BackendRegistry* registry = [] {
    auto* r = new BackendRegistry();
    // Registering into an empty registry cannot fail.
    (void)register_xnnpack_backend(*r);
    return r;
  }();
  return registry;
}

}  // namespace torchlight
