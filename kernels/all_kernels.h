// The kernels this build links, in one registry: portable kernels first,
// then any optimized library, whose higher priority makes it win where it
// has a kernel. Built on first use (no static initialisers at load time).
#pragma once

#include "runtime/core/result.h"
#include "runtime/kernel/kernel_registry.h"

namespace torchlight {

/// The process-wide registry of every linked kernel library. Errors: a
/// library registered a duplicate or the registry is full (a build bug; the
/// message says which kernel).
Result<const KernelRegistry*> all_kernels();

}  // namespace torchlight
