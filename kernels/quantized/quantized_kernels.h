// The quantized kernel library: upstream ExecuTorch's quantized operators
// (quantized_decomposed::*, same names and schemas), at priority kCustom
// with an empty KernelKey (the kernels check dtypes themselves, so a wrong
// dtype is an error naming it rather than a missing operator). Registration
// is explicit, like the other libraries (kernels/all_kernels.cpp).
#pragma once

#include "runtime/core/span.h"
#include "runtime/core/status.h"
#include "runtime/kernel/kernel.h"
#include "runtime/kernel/kernel_registry.h"

namespace torchlight {

/// Every kernel of this library. Static; lives for the whole program.
Span<const Kernel> quantized_kernels();

/// Registers quantized_kernels() into `registry`. Errors: as
/// KernelRegistry::register_kernels (duplicate, registry full).
Status register_quantized_kernels(KernelRegistry& registry);

}  // namespace torchlight
