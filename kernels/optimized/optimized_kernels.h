// The optimized kernel library: fast float32 kernels for the operators that
// dominate LLM inference on CPU (linear, mm, addmm, bmm), on a
// multi-threaded GEMM (gemm/gemm.h) with AVX-512, AVX2 and portable paths
// chosen at run time.
//
// Every entry has priority kOptimized and a KernelKey asking for float32
// operands, so it overrides the portable kernel for float32 and every other
// dtype still resolves to portable. Layouts are not part of the key: the
// kernels read any strides (and hand the rare unusual out layout to the
// portable kernel themselves). Registration is explicit: call
// register_optimized_kernels() after register_portable_kernels().
#pragma once

#include "runtime/core/span.h"
#include "runtime/core/status.h"
#include "runtime/kernel/kernel_registry.h"

namespace torchlight {

/// Every kernel of this library; static, lives for the whole program.
Span<const Kernel> optimized_kernels();

/// Registers optimized_kernels() into `registry`, which keeps pointers to
/// the static names and functions. Errors: as KernelRegistry::
/// register_kernels (kInvalidArgument for a duplicate, kOutOfResources
/// when it is full).
Status register_optimized_kernels(KernelRegistry& registry);

}  // namespace torchlight
