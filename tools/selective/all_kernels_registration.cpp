// register_selected_kernels for the comparison runner: every kernel library
// (the registry all_kernels() builds), copied into the runner's registry,
// and the default backends: the full runner the selective ones compare to.
#include "extension/module/default_backends.h"
#include "kernels/all_kernels.h"

namespace torchlight {

Status register_selected_kernels(KernelRegistry& registry) {
  Result<const KernelRegistry*> all = all_kernels();
  if (!all.ok()) return all.status();
  return registry.register_kernels(all.get()->kernels());
}

const BackendRegistry* selected_backends() { return default_backends(); }

}  // namespace torchlight
