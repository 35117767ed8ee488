// The kernel of my_ops::my_op.out, one source for both sides: the runtime
// links it with EXECUTORCH_LIBRARY's registration (custom_ops_runner.cpp),
// the torch extension wraps the same function with WRAP_TO_ATEN
// (my_op_aten.cpp).
#include "examples/custom_ops/my_op.h"

#include <cmath>

#include <executorch/extension/kernel_util/make_boxed_from_unboxed_functor.h>
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>

namespace custom_ops {

using executorch::aten::ScalarType;
using executorch::aten::Tensor;
using executorch::runtime::Error;
using executorch::runtime::KernelRuntimeContext;

Tensor& my_op_out(KernelRuntimeContext& ctx, const Tensor& a, double alpha, Tensor& out) {
  ET_KERNEL_CHECK_MSG(ctx, a.scalar_type() == ScalarType::Float && out.scalar_type() == ScalarType::Float,
                      InvalidType, out, "float32 tensors only");
  ET_KERNEL_CHECK(ctx, executorch::runtime::resize_tensor(out, a.sizes()) == Error::Ok, InvalidArgument,
                  out);
  const float* in = a.const_data_ptr<float>();
  float* result = out.mutable_data_ptr<float>();
  const float scale = static_cast<float>(alpha);
  for (int64_t i = 0; i < a.numel(); ++i) result[i] = scale * in[i] / (1.0f + std::fabs(in[i]));
  return out;
}

}  // namespace custom_ops

// Registers my_ops::my_op.out in the default registry when this file is linked.
EXECUTORCH_LIBRARY(my_ops, "my_op.out", custom_ops::my_op_out);
