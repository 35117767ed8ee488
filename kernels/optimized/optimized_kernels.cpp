#include "kernels/optimized/optimized_kernels.h"

#include "kernels/optimized/optimized_ops.h"
#include "kernels/optimized/util/gemm_prepare.h"
#include "kernels/schemas/op_schemas.h"

namespace torchlight {

namespace {

// A key requiring float32 at the given schema positions, any layout.
template <size_t N>
constexpr KernelKey float_key(const uint8_t (&args)[N]) {
  KernelKey key;
  for (size_t i = 0; i < N; ++i) {
    key.tensors[i].arg = args[i];
    key.tensors[i].any_dtype = false;
    key.tensors[i].dtype = ScalarType::kFloat;
  }
  key.num_tensors = N;
  return key;
}

constexpr KernelPriority kPriority = KernelPriority::kOptimized;

// Keys name schema positions: addmm(self, mat1, mat2, beta, alpha, out),
// linear(input, weight, bias?, out) with the optional bias left free;
// convolution(input, weight, bias?, ..., out) likewise. Each
// checks the operands' ranks and dtypes at load and prepares its gemm
// packing workspace as method scratch (util/gemm_prepare.h).
constexpr Kernel kKernels[] = {
    {"aten::addmm.out", &optimized::addmm_out, kPriority, float_key({0, 1, 2, 5}),
     &schemas::katen__addmm_out, &optimized::prepare_addmm},
    {"aten::convolution.out", &optimized::convolution_out, kPriority, float_key({0, 1, 9}),
     &schemas::katen__convolution_out, &optimized::prepare_convolution},
    {"aten::bmm.out", &optimized::bmm_out, kPriority, float_key({0, 1, 2}), &schemas::katen__bmm_out,
     &optimized::prepare_bmm},
    {"aten::linear.out", &optimized::linear_out, kPriority, float_key({0, 1, 3}),
     &schemas::katen__linear_out, &optimized::prepare_linear},
    {"aten::mm.out", &optimized::mm_out, kPriority, float_key({0, 1, 2}), &schemas::katen__mm_out,
     &optimized::prepare_mm},
    // Element-wise and copies: the portable fast paths with large loops on
    // the thread pool. add/sub(self, other, alpha, out), mul/div(self,
    // other, out), permute_copy(self, dims, out).
    {"aten::add.out", &optimized::add_out, kPriority, float_key({0, 1, 3}),
     &schemas::katen__add_out, &optimized::prepare_add},
    {"aten::sub.out", &optimized::sub_out, kPriority, float_key({0, 1, 3}),
     &schemas::katen__sub_out, &optimized::prepare_sub},
    {"aten::mul.out", &optimized::mul_out, kPriority, float_key({0, 1, 2}),
     &schemas::katen__mul_out, &optimized::prepare_mul},
    {"aten::div.out", &optimized::div_out, kPriority, float_key({0, 1, 2}),
     &schemas::katen__div_out, &optimized::prepare_div},
    {"aten::permute_copy.out", &optimized::permute_copy_out, kPriority, float_key({0, 2}),
     &schemas::katen__permute_copy_out, &optimized::prepare_permute_copy},
};

}  // namespace

Span<const Kernel> optimized_kernels() {
  return Span<const Kernel>(kKernels, sizeof(kKernels) / sizeof(kKernels[0]));
}

Status register_optimized_kernels(KernelRegistry& registry) {
  return registry.register_kernels(optimized_kernels());
}

}  // namespace torchlight
