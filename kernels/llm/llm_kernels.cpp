#include "kernels/llm/llm_kernels.h"

namespace torchlight {
namespace {

// constexpr: constant-initialised, so no code runs before main.
constexpr Kernel kLlmKernels[] = {
    Kernel{"torchlight::sdpa_with_kv_cache.out", &llm::sdpa_with_kv_cache_out,
           KernelPriority::kCustom, KernelKey{}},
};

}  // namespace

Span<const Kernel> llm_kernels() { return Span<const Kernel>(kLlmKernels); }

Status register_llm_kernels(KernelRegistry& registry) {
  return registry.register_kernels(llm_kernels());
}

}  // namespace torchlight
