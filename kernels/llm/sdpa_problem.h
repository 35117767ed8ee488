// SdpaProblem: one validated call of torchlight::sdpa_with_kv_cache, as raw
// pointers and strides, and the attention loops that run over it.
//
// The loops are compiled several times (sdpa_attend_*.cpp), each with its own
// instruction-set flags, from one source (sdpa_attend_impl.h); sdpa_dispatch.h
// picks the best one the CPU supports. This header is included by those
// differently-flagged files, so it holds plain data and declarations only: an
// inline function here could be emitted with AVX-512 instructions and then
// shared with code that runs on any CPU.
#pragma once

#include <cstddef>
#include <cstdint>

namespace torchlight::llm {

/// Everything the attention loops read, after the kernel has checked shapes,
/// dtypes and input_pos and written the new rows into the caches. Every
/// pointer is borrowed from the kernel's arguments and must outlive the call.
/// Strides are in elements, indexed [batch, head, row]; the last dimension
/// (D) has stride 1 in every tensor.
struct SdpaProblem {
  const float* query;        // [B, Hq, T, D]
  const float* key_cache;    // [B, Hkv, S, D], rows 0..max(input_pos) valid
  const float* value_cache;  // [B, Hkv, S, D]
  // Float16 caches (IEEE binary16 bits), set instead of the two above: the
  // loops widen each row to float32 as they load it (a float16 cache is
  // read at half the bytes).
  const uint16_t* key_cache_half;
  const uint16_t* value_cache_half;
  const int64_t* input_pos;  // [T], each in [0, S); null: the limits below
  float* out;                // [B, Hq, T, D]

  int64_t batch;     // B
  int64_t q_heads;   // Hq
  int64_t kv_heads;  // Hkv (> 0, divides Hq)
  int64_t rows;      // T
  int64_t head_dim;  // D
  int64_t input_pos_stride;
  int64_t query_strides[3];
  int64_t key_cache_strides[3];
  int64_t value_cache_strides[3];
  int64_t out_strides[3];
  float scale;  // Multiplies every q.k score.
  // Without input_pos (upstream's llama:: operators): row i sits at position
  // start_pos + i and reads positions up to it when `causal`, else up to
  // start_pos + T - 1 (every row the same).
  int64_t start_pos;
  bool causal;

  // The work split (sdpa_plan_work). The query rows of one key/value head
  // (Hq / Hkv heads times T rows, ordered row-major by (row, head), so rows
  // that share a position sit together) are cut into `blocks_per_group`
  // blocks of at most `rows_per_block` rows. One work item is one block:
  // item = (b * Hkv + g) * blocks_per_group + block.
  int64_t rows_per_block;
  int64_t blocks_per_group;
};

/// The cache rows the loops prefetch while work item `item` computes: the
/// valid rows of item + 1's key/value head, when there is such an item and
/// it reads another head. The thread pool deals each thread a contiguous
/// run of chunks, so item + 1 mostly runs next on the same thread, also
/// across a chunk's end (at 2 threads a decode's 12 items come in chunks
/// of 2); only at the end of a thread's run does it serve the other core.
/// Offsets in elements from the starts of key_cache and value_cache (either
/// dtype); rows == 0: nothing to prefetch. Never a row past item + 1's own
/// longest valid prefix, so never past the cache.
struct SdpaPrefetch {
  int64_t key_offset;
  int64_t value_offset;
  int64_t rows;
};
constexpr SdpaPrefetch kNoSdpaPrefetch{0, 0, 0};
SdpaPrefetch sdpa_prefetch_of(const SdpaProblem& p, size_t item);

/// Most query rows one work item holds; its scratch is sized by this.
constexpr int64_t kSdpaMaxRowsPerBlock = 8;

/// Prefill's blocks: groups of at least kSdpaMinPrefillRows rows are cut
/// into blocks of up to kSdpaPrefillRows, which the prefill loop
/// (sdpa_prefill_impl.h) takes a vector's width of rows at a time.
constexpr int64_t kSdpaPrefillRows = 16;
constexpr int64_t kSdpaMinPrefillRows = 2 * kSdpaPrefillRows;

/// Computes out for work items [begin, end) of `p` (see SdpaProblem). Each
/// variant is the same source built for one instruction set; they agree up
/// to float rounding. Only call a variant the CPU supports (sdpa_dispatch.h).
void sdpa_attend_generic(const SdpaProblem& p, size_t begin, size_t end);
#if defined(__x86_64__)
void sdpa_attend_avx2(const SdpaProblem& p, size_t begin, size_t end);
void sdpa_attend_avx512(const SdpaProblem& p, size_t begin, size_t end);
#endif

/// dst[i] = src[i] rounded to float16 (to nearest, ties to even; beyond the
/// range: +-inf, like torch's .to(float16)), as IEEE binary16 bits, i < n.
/// The cache writes of a float16 cache; one build per instruction set, like
/// the loops, all giving the same bits.
void sdpa_narrow_generic(const float* src, uint16_t* dst, int64_t n);
#if defined(__x86_64__)
void sdpa_narrow_avx2(const float* src, uint16_t* dst, int64_t n);
void sdpa_narrow_avx512(const float* src, uint16_t* dst, int64_t n);
#endif

}  // namespace torchlight::llm
