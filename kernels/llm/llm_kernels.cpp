#include "kernels/llm/llm_kernels.h"

namespace torchlight {
namespace {

constexpr WrittenArgs sdpa_written() {
  WrittenArgs w = writes_outs(1);
  w.num_mutated = 2;
  w.mutated[0] = 3;
  w.mutated[1] = 4;
  return w;
}
constexpr WrittenArgs kSdpaWritten = sdpa_written();

// constexpr: constant-initialised, so no code runs before main.
constexpr Kernel kLlmKernels[] = {
    // Appends to key_cache and value_cache (arguments 3 and 4) in place.
    Kernel{"torchlight::sdpa_with_kv_cache.out", &llm::sdpa_with_kv_cache_out,
           KernelPriority::kCustom, KernelKey{}, kSdpaWritten},
};

}  // namespace

Span<const Kernel> llm_kernels() { return Span<const Kernel>(kLlmKernels); }

Status register_llm_kernels(KernelRegistry& registry) {
  return registry.register_kernels(llm_kernels());
}

}  // namespace torchlight
