#include "kernels/optimized/optimized_kernels.h"

#include "kernels/optimized/optimized_ops.h"

namespace torchlight {

namespace {

// A key requiring float32 for the first `count` tensor arguments, any
// layout. Tensors are counted as the executor lists them: every tensor
// argument in schema order (an absent optional one is skipped), then the
// returned out.
constexpr KernelKey float_key(size_t count) {
  KernelKey key;
  for (size_t i = 0; i < count; ++i) {
    key.tensors[i].any_dtype = false;
    key.tensors[i].dtype = ScalarType::kFloat;
  }
  key.num_tensors = count;
  return key;
}

constexpr KernelPriority kPriority = KernelPriority::kOptimized;

// Keys cover only the tensors every call has: linear's optional bias would
// shift out's position, so its key names input and weight.
constexpr Kernel kKernels[] = {
    {"aten::addmm.out", &optimized::addmm_out, kPriority, float_key(4)},
    {"aten::bmm.out", &optimized::bmm_out, kPriority, float_key(3)},
    {"aten::linear.out", &optimized::linear_out, kPriority, float_key(2)},
    {"aten::mm.out", &optimized::mm_out, kPriority, float_key(3)},
};

}  // namespace

Span<const Kernel> optimized_kernels() {
  return Span<const Kernel>(kKernels, sizeof(kKernels) / sizeof(kKernels[0]));
}

Status register_optimized_kernels(KernelRegistry& registry) {
  return registry.register_kernels(optimized_kernels());
}

}  // namespace torchlight
