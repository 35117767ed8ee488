// The LLM kernel library: fused operators the LLM exporter emits, at
// priority kCustom: torchlight::sdpa_with_kv_cache.out, attention with an
// in-place key/value cache (contract: python/torchlight/llm/custom_ops.py),
// torchlight::silu.out, torchlight::rms_norm.out and torchlight::rope.out,
// fused pointwise chains
// (contract: python/torchlight/kernels/fused_pointwise.py),
// torchlight::add_rms_norm.out and torchlight::swiglu.out, fused Llama block
// operators (contract: python/torchlight/llm/block_ops.py),
// and upstream ExecuTorch's llama::update_cache.out, llama::custom_sdpa.out
// and llama::sdpa_with_kv_cache.out over the same loops (contract:
// python/torchlight/llm/llama_ops.py). Registration is explicit, like the
// portable library.
#pragma once

#include "runtime/core/evalue.h"
#include "runtime/core/span.h"
#include "runtime/core/status.h"
#include "runtime/kernel/kernel.h"
#include "runtime/kernel/kernel_context.h"
#include "runtime/kernel/kernel_registry.h"

namespace torchlight {

/// Every kernel of this library: priority kCustom, empty KernelKey (the
/// kernels check dtypes themselves, so a wrong dtype is an error naming it
/// rather than a missing operator). Static; lives for the whole program.
Span<const Kernel> llm_kernels();

/// Registers llm_kernels() into `registry`, which keeps pointers to the
/// static names and functions. Errors: as KernelRegistry::register_kernels
/// (kInvalidArgument for a duplicate, kOutOfResources when it is full).
Status register_llm_kernels(KernelRegistry& registry);

namespace llm {

/// torchlight::sdpa_with_kv_cache.out(Tensor query, Tensor key, Tensor value,
///     Tensor(a!) key_cache, Tensor(b!) value_cache, Tensor input_pos,
///     float? scale=None, *, Tensor(c!) out) -> Tensor(c!)
///
/// args: the eight arguments in that order, then the return slot.
/// query [B, Hq, T, D], key and value [B, Hkv, T, D], caches [B, Hkv, S, D],
/// out: float32; input_pos [T] int64; scale None (1/sqrt(D)) or a float.
/// Writes key/value row i into the caches at input_pos[i], then sets
/// out[b, h, i] = softmax over j <= input_pos[i] of
/// scale * query[b, h, i] . key_cache[b, h / (Hq / Hkv), j], applied to the
/// value rows. out is resized to [B, Hq, T, D]. Every tensor must have
/// stride 1 in its last dimension; other strides are free.
///
/// Errors (through ctx.fail, the message naming the argument and expected vs
/// actual; nothing is written on error): kInvalidArgument for a shape that
/// does not fit the others, Hq not a multiple of Hkv, T > S, an input_pos
/// value outside [0, S), a last dimension with stride != 1, a tensor without
/// data, or an out that cannot be resized. The runtime has checked the
/// argument kinds against the schema, and sdpa_with_kv_cache_prepare the
/// rest, before this runs.
void sdpa_with_kv_cache_out(KernelContext& ctx, Span<EValue*> args);

/// The prepare step, once per instruction at load. Errors (naming the
/// argument): kInvalidType for a dtype other than float32 (int64 for
/// input_pos); kInvalidArgument for a wrong rank, or an out whose dim order
/// does not keep D innermost. Keeps the attention loops' build for this CPU
/// (an SdpaVariant) as the instruction's state.
Status sdpa_with_kv_cache_prepare(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call);

/// torchlight::rope_sdpa_with_kv_cache.out(Tensor query, Tensor key,
///     Tensor value, Tensor(a!) key_cache, Tensor(b!) value_cache,
///     Tensor input_pos, Tensor cos, Tensor sin, float? scale=None, *,
///     Tensor(c!) out) -> Tensor(c!)
///
/// sdpa_with_kv_cache on [B, T, H, D] tensors, with the rotary embedding
/// of query and key first: query [B, T, Hq, D], key and value [B, T, Hkv, D]
/// (before the rotation), caches [B, Hkv, S, D], cos and sin [T, D / 2]
/// (dense), out [B, T, Hq, D], all float32 but input_pos (int64 [T]) and
/// the caches (float32, or both float16). Each head's pairs
/// (x[2p], x[2p + 1]) of query and key are turned by the angle of their
/// position's row t: (x0 c - x1 s, x0 s + x1 c), c = cos[t, p],
/// s = sin[t, p]; then the rotated key and the value rows are written at
/// input_pos and out[b, t, h] is the attention of rotated query row
/// (b, t, h), as sdpa_with_kv_cache_out computes it. D must be even;
/// other errors as sdpa_with_kv_cache_out's, plus kMemoryAllocationFailed
/// when neither the method's scratch nor the temp allocator holds the
/// rotated rows. The prepare step checks dtypes, ranks and out's dim order
/// and asks for (numel(query) + numel(key)) floats of scratch.
void rope_sdpa_with_kv_cache_out(KernelContext& ctx, Span<EValue*> args);
Status rope_sdpa_with_kv_cache_prepare(PrepareContext& ctx, Span<EValue*> args,
                                       PreparedCall* call);

/// Upstream's llama:: operators (schemas in python/torchlight/llm/llama_ops.py;
/// tensors [B, S, H, D], caches [B, max_S, Hkv, D], float32). Errors
/// (through ctx.fail, naming the argument; nothing written on error):
/// kInvalidArgument for shapes that do not fit, positions outside the cache,
/// a last dimension with stride != 1; kNotSupported for an attn_mask or a
/// nonzero drpout_p. The prepare steps check dtypes (kInvalidType) and ranks.
void llama_update_cache_out(KernelContext& ctx, Span<EValue*> args);
Status llama_update_cache_prepare(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call);
void llama_custom_sdpa_out(KernelContext& ctx, Span<EValue*> args);
Status llama_custom_sdpa_prepare(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call);
void llama_sdpa_with_kv_cache_out(KernelContext& ctx, Span<EValue*> args);
Status llama_sdpa_with_kv_cache_prepare(PrepareContext& ctx, Span<EValue*> args,
                                        PreparedCall* call);

/// torchlight::silu.out(Tensor input, *, Tensor(a!) out) -> Tensor(a!):
/// out = input * sigmoid(input), float32 (contract:
/// python/torchlight/kernels/fused_pointwise.py). out is resized to input's
/// shape. Errors: kInvalidType (prepare) for a dtype other than float32;
/// kInvalidArgument for an input or out that is not contiguous row-major,
/// or an out that cannot be resized.
void silu_out(KernelContext& ctx, Span<EValue*> args);
Status silu_prepare(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call);

/// torchlight::rms_norm.out(Tensor input, Tensor weight, float eps, *,
/// Tensor(a!) out) -> Tensor(a!): out = input * rsqrt(mean(input^2, -1) +
/// eps) * weight over the last dimension D; input [..., D], weight [D],
/// float32. Errors: kInvalidType (prepare) for a dtype other than float32;
/// kInvalidArgument for a rank-0 input or a weight that is not [D], a
/// tensor that is not contiguous row-major, or an out that cannot be resized.
void rms_norm_out(KernelContext& ctx, Span<EValue*> args);
Status rms_norm_prepare(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call);

/// torchlight::rope.out(Tensor pairs, Tensor cos, Tensor sin, *, Tensor(a!)
/// out) -> Tensor(a!): rotary embedding of interleaved pairs; pairs
/// [..., T, P, 2], cos and sin [T, P], float32, out[..., t, p] = (x0 c -
/// x1 s, x0 s + x1 c). Errors: kInvalidType (prepare) for a dtype other
/// than float32; kInvalidArgument for pairs of rank < 3 or last size != 2,
/// a cos or sin that is not [T, P], a tensor that is not contiguous
/// row-major, or an out that cannot be resized.
void rope_out(KernelContext& ctx, Span<EValue*> args);
Status rope_prepare(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call);

/// torchlight::add_rms_norm.out(Tensor input, Tensor residual, Tensor weight,
/// float eps, *, Tensor(a!) sum, Tensor(b!) out) -> (Tensor(a!), Tensor(b!)):
/// sum = input + residual, out = rms_norm(sum, weight, eps) over the last
/// dimension D (contract: python/torchlight/llm/block_ops.py); input and
/// residual [..., D] of one shape, weight [D], all float32. sum and out are
/// resized to input's shape. Errors: kInvalidType (prepare) for a dtype
/// other than float32; kInvalidArgument for a rank-0 input, a residual of
/// other sizes, a weight that is not [D], a tensor that is not contiguous
/// row-major, or a sum or out that cannot be resized.
void add_rms_norm_out(KernelContext& ctx, Span<EValue*> args);
Status add_rms_norm_prepare(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call);

/// torchlight::swiglu.out(Tensor gate, Tensor? up=None, *, Tensor(a!) out)
/// -> Tensor(a!): silu(gate) * up, float32, up of gate's sizes; without up,
/// gate [..., 2H] holds each row's gate then up halves and out is [..., H]
/// (contract: python/torchlight/llm/block_ops.py). Errors: kInvalidType
/// (prepare) for a dtype other than float32; kInvalidArgument for an up of
/// other sizes, a gate without up whose last size is odd (or rank 0), a
/// tensor that is not contiguous row-major, or an out that cannot be resized.
void swiglu_out(KernelContext& ctx, Span<EValue*> args);
Status swiglu_prepare(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call);

}  // namespace llm
}  // namespace torchlight
