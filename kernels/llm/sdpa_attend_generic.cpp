// The attention loops (sdpa_attend_impl.h), generic build.
// Baseline flags: any CPU of the target architecture (SSE2 on x86-64, NEON on
// AArch64); 4-float vectors.
#define TL_VEC_LANES 4
#include "kernels/llm/sdpa_attend_impl.h"
#include "kernels/llm/sdpa_prefill_impl.h"

namespace torchlight::llm {

void sdpa_attend_generic(const SdpaProblem& p, size_t begin, size_t end) {
  // Prefill blocks (more rows than attend_block holds): sdpa_prefill_impl.h.
  if (p.rows_per_block > kSdpaMaxRowsPerBlock) {
    attend_range_prefill(p, begin, end);
  } else {
    attend_range(p, begin, end);
  }
}

void sdpa_narrow_generic(const float* src, uint16_t* dst, int64_t n) { narrow_values(src, dst, n); }

}  // namespace torchlight::llm
