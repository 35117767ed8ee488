// Declarations of every portable kernel function, generated from
// portable_ops.def. Tests call these directly; applications use the table
// in portable_kernels.h instead.
#pragma once

#include "runtime/core/evalue.h"
#include "runtime/core/span.h"
#include "runtime/kernel/kernel.h"

namespace torchlight::portable {

#define TL_PORTABLE_OP(op_name, function) void function(KernelContext& ctx, Span<EValue*> args);
#define TL_PORTABLE_OP_PREPARE(op_name, function, prepare)     \
  void function(KernelContext& ctx, Span<EValue*> args); \
  Status prepare(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call);
#include "kernels/portable/portable_ops.def"
#undef TL_PORTABLE_OP_PREPARE
#undef TL_PORTABLE_OP

}  // namespace torchlight::portable
