#include "tools/cli/cli_backends.h"

#include "backends/xnnpack/xnnpack_backend.h"

namespace torchlight {

const BackendRegistry* cli_backends() {
  static const BackendRegistry* registry = [] {
    auto* r = new BackendRegistry();
    // Registering into an empty registry cannot fail.
    (void)register_xnnpack_backend(*r);
    return r;
  }();
  return registry;
}

}  // namespace torchlight
