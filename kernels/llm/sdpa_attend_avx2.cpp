// The attention loops (sdpa_attend_impl.h), avx2 build.
// Built with -mavx2 -mfma (CMakeLists.txt), 8-float vectors; chosen at run time
// only on CPUs with both (sdpa_dispatch.cpp).
#define TL_VEC_LANES 8
#include "kernels/llm/sdpa_attend_impl.h"
#include "kernels/llm/sdpa_prefill_impl.h"

namespace torchlight::llm {

void sdpa_attend_avx2(const SdpaProblem& p, size_t begin, size_t end) {
  // Prefill blocks (more rows than attend_block holds): sdpa_prefill_impl.h.
  if (p.rows_per_block > kSdpaMaxRowsPerBlock) {
    attend_range_prefill(p, begin, end);
  } else {
    attend_range(p, begin, end);
  }
}

void sdpa_narrow_avx2(const float* src, uint16_t* dst, int64_t n) { narrow_values(src, dst, n); }

}  // namespace torchlight::llm
