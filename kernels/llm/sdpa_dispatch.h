// Running the attention loops of sdpa_with_kv_cache: which build of them
// this CPU supports, how the work is cut, and the thread pool.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/llm/sdpa_problem.h"
#include "runtime/core/span.h"
#include "runtime/core/tensor.h"

namespace torchlight::llm {

using SdpaAttendFn = void (*)(const SdpaProblem& p, size_t begin, size_t end);
using SdpaNarrowFn = void (*)(const float* src, uint16_t* dst, int64_t n);

/// One build of the attention loops.
struct SdpaVariant {
  const char* name;  // "avx512", "avx2" or "generic"; static storage.
  SdpaAttendFn attend;
  SdpaNarrowFn narrow;  // Float16 cache writes (sdpa_narrow_*).
};

/// The builds this binary holds that this CPU can run, fastest first; never
/// empty ("generic" is last). Detected once; the table is static.
Span<const SdpaVariant> sdpa_variants();

/// The problem of sdpa_with_kv_cache's [B, H, S, D] tensors (checked by the
/// caller: float32, or both caches float16; D innermost; input_pos int64
/// [T]) with every row at its input_pos; the work split is left to
/// sdpa_plan_work / sdpa_run.
SdpaProblem sdpa_problem_bhsd(const Tensor& query, const Tensor& key_cache,
                              const Tensor& value_cache, const Tensor& input_pos,
                              const Tensor& out, float scale);

/// Sets p.rows_per_block and p.blocks_per_group: blocks of up to
/// kSdpaMaxRowsPerBlock rows, or kSdpaPrefillRows for groups of at least
/// kSdpaMinPrefillRows rows (each key/value row is read once per block),
/// cut smaller when there are fewer blocks than `threads`.
void sdpa_plan_work(SdpaProblem& p, size_t threads);

/// Number of work items of a planned problem: B * Hkv * blocks_per_group.
size_t sdpa_work_items(const SdpaProblem& p);

/// Plans `p` for the thread pool's threads and computes every output row with
/// `variant` (null: sdpa_variants()[0]), spread over the pool. Small
/// problems run on the calling thread. `variant` must come from
/// sdpa_variants().
void sdpa_run(SdpaProblem& p, const SdpaVariant* variant = nullptr);

}  // namespace torchlight::llm
