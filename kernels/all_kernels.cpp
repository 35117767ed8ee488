#include "kernels/all_kernels.h"

#include "extension/kernel_util/linked_kernels.h"
#include "kernels/llm/llm_kernels.h"
#include "kernels/optimized/optimized_kernels.h"
#include "kernels/portable/portable_kernels.h"
#include "kernels/quantized/quantized_kernels.h"

namespace torchlight {
namespace {

constexpr size_t kMaxKernels = 4096;

struct Registry {
  StaticKernelRegistry<kMaxKernels> registry;
  Status status;
  Registry() {
    status = register_portable_kernels(registry);
    if (status.ok()) status = register_optimized_kernels(registry);
    if (status.ok()) status = register_llm_kernels(registry);
    if (status.ok()) status = register_quantized_kernels(registry);
    // Custom kernels registered by TL_REGISTER_KERNEL / EXECUTORCH_LIBRARY.
    if (status.ok()) status = register_linked_kernels(registry);
  }
};

}  // namespace

Result<const KernelRegistry*> all_kernels() {
  // Function-local static: built once, thread-safely, on first call.
  static Registry* instance = new Registry();
  if (!instance->status.ok()) return instance->status;
  return static_cast<const KernelRegistry*>(&instance->registry);
}

}  // namespace torchlight
