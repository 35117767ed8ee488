#include "kernels/llm/llm_kernels.h"

#include "kernels/schemas/op_schemas.h"

namespace torchlight {
namespace {

// constexpr: constant-initialised, so no code runs before main. The schema
// marks key_cache and value_cache (arguments 3 and 4) as written in place.
constexpr Kernel kLlmKernels[] = {
    Kernel{"torchlight::sdpa_with_kv_cache.out", &llm::sdpa_with_kv_cache_out,
           KernelPriority::kCustom, KernelKey{}, &schemas::ktorchlight__sdpa_with_kv_cache_out,
           &llm::sdpa_with_kv_cache_prepare},
    // The same over [B, T, H, D] tensors, rotary embedding included.
    Kernel{"torchlight::rope_sdpa_with_kv_cache.out", &llm::rope_sdpa_with_kv_cache_out,
           KernelPriority::kCustom, KernelKey{},
           &schemas::ktorchlight__rope_sdpa_with_kv_cache_out,
           &llm::rope_sdpa_with_kv_cache_prepare},
    // Upstream ExecuTorch's names and [B, S, H, D] layout (op_llama_sdpa.cpp).
    Kernel{"llama::update_cache.out", &llm::llama_update_cache_out, KernelPriority::kCustom,
           KernelKey{}, &schemas::kllama__update_cache_out, &llm::llama_update_cache_prepare},
    Kernel{"llama::custom_sdpa.out", &llm::llama_custom_sdpa_out, KernelPriority::kCustom,
           KernelKey{}, &schemas::kllama__custom_sdpa_out, &llm::llama_custom_sdpa_prepare},
    Kernel{"llama::sdpa_with_kv_cache.out", &llm::llama_sdpa_with_kv_cache_out,
           KernelPriority::kCustom, KernelKey{}, &schemas::kllama__sdpa_with_kv_cache_out,
           &llm::llama_sdpa_with_kv_cache_prepare},
    // Fused pointwise chains (op_silu.cpp, op_rms_norm.cpp, op_rope.cpp).
    Kernel{"torchlight::silu.out", &llm::silu_out, KernelPriority::kCustom, KernelKey{},
           &schemas::ktorchlight__silu_out, &llm::silu_prepare},
    Kernel{"torchlight::rms_norm.out", &llm::rms_norm_out, KernelPriority::kCustom, KernelKey{},
           &schemas::ktorchlight__rms_norm_out, &llm::rms_norm_prepare},
    Kernel{"torchlight::rope.out", &llm::rope_out, KernelPriority::kCustom, KernelKey{},
           &schemas::ktorchlight__rope_out, &llm::rope_prepare},
    // Fused Llama block operators (op_add_rms_norm.cpp, op_swiglu.cpp).
    Kernel{"torchlight::add_rms_norm.out", &llm::add_rms_norm_out, KernelPriority::kCustom,
           KernelKey{}, &schemas::ktorchlight__add_rms_norm_out, &llm::add_rms_norm_prepare},
    Kernel{"torchlight::swiglu.out", &llm::swiglu_out, KernelPriority::kCustom, KernelKey{},
           &schemas::ktorchlight__swiglu_out, &llm::swiglu_prepare},
};

}  // namespace

Span<const Kernel> llm_kernels() { return Span<const Kernel>(kLlmKernels); }

Status register_llm_kernels(KernelRegistry& registry) {
  return registry.register_kernels(llm_kernels());
}

}  // namespace torchlight
