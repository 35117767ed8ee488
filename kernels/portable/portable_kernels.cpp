// The kernel table of one portable library. Built once per library by
// torchlight_selective_kernel_library(), each time with its own generated
// "selected_portable_ops.def": the TL_PORTABLE_OP lines of the operators
// that library selected.
#include "kernels/portable/portable_kernels.h"

#include "kernels/portable/portable_ops.h"

namespace torchlight {

namespace {

// constexpr: constant-initialised, so no code runs before main.
constexpr Kernel kPortableKernels[] = {
#define TL_PORTABLE_OP(op_name, function) \
  Kernel{op_name, &portable::function, KernelPriority::kPortable, KernelKey{}},
#include "selected_portable_ops.def"
#undef TL_PORTABLE_OP
};

}  // namespace

Span<const Kernel> portable_kernels() { return Span<const Kernel>(kPortableKernels); }

Status register_portable_kernels(KernelRegistry& registry) {
  return registry.register_kernels(portable_kernels());
}

}  // namespace torchlight
