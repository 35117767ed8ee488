// The portable kernel library: a reference implementation of every operator
// it lists, for all real dtypes, layouts and broadcasting, at the lowest
// priority (kPortable), so optimized and custom kernels override it.
//
// Registration is explicit (no static initialisers). The library
// torchlight_portable_kernels holds every operator of portable_ops.def and
// defines the two functions below; a library made by the CMake function
// torchlight_selective_kernel_library() holds only the operators it names,
// behind functions named after its table (declared in its generated header),
// so kernels it does not list are never linked and tables never collide.
#pragma once

#include "runtime/core/span.h"
#include "runtime/core/status.h"
#include "runtime/kernel/kernel_registry.h"

namespace torchlight {

/// Every kernel of this library: priority kPortable, empty KernelKey (any
/// dtype and layout). The table is static and lives for the whole program.
Span<const Kernel> portable_kernels();

/// Registers portable_kernels() into `registry`, which keeps pointers to the
/// static names and functions. Errors: as KernelRegistry::register_kernels
/// (kInvalidArgument for a duplicate, kOutOfResources when it is full).
Status register_portable_kernels(KernelRegistry& registry);

}  // namespace torchlight
