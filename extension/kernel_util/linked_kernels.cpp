#include "extension/kernel_util/linked_kernels.h"

namespace torchlight {
namespace {

// Constant-initialised, so it is null before any LinkedKernel's constructor
// runs, whatever the order of static initialisation across files.
const LinkedKernel* g_first = nullptr;

}  // namespace

void LinkedKernel::link() {
  next_ = g_first;
  g_first = this;
}

const LinkedKernel* LinkedKernel::first() { return g_first; }

size_t linked_kernel_count() {
  size_t count = 0;
  for (const LinkedKernel* k = LinkedKernel::first(); k != nullptr; k = k->next()) ++count;
  return count;
}

Status register_linked_kernels(KernelRegistry& registry) {
  // The list runs newest first; register in link order so the first
  // duplicate reported is the later one.
  size_t count = linked_kernel_count();
  for (size_t target = count; target > 0; --target) {
    const LinkedKernel* k = LinkedKernel::first();
    for (size_t i = 1; i < target; ++i) k = k->next();
    Status status = registry.register_kernel(k->kernel());
    if (!status.ok()) return status;
  }
  return Status();
}

}  // namespace torchlight
