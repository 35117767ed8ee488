// my_ops::my_op: out = alpha * a / (1 + |a|), a scaled softsign, as a custom
// operator the portable library does not have. Declared with upstream's
// names, as ExecuTorch's getting-started guide writes custom kernels.
#pragma once

#include <executorch/runtime/core/exec_aten/exec_aten.h>
#include <executorch/runtime/kernel/kernel_runtime_context.h>

namespace custom_ops {

executorch::aten::Tensor& my_op_out(executorch::runtime::KernelRuntimeContext& ctx,
                                    const executorch::aten::Tensor& a, double alpha,
                                    executorch::aten::Tensor& out);

}  // namespace custom_ops
