// The attention loops (sdpa_attend_impl.h), avx512 build.
// Built with -mavx512f (CMakeLists.txt), 16-float vectors; chosen at run time
// only on CPUs with AVX-512F and FMA (sdpa_dispatch.cpp).
#define TL_VEC_LANES 16
#include "kernels/llm/sdpa_attend_impl.h"
#include "kernels/llm/sdpa_prefill_impl.h"

namespace torchlight::llm {

void sdpa_attend_avx512(const SdpaProblem& p, size_t begin, size_t end) {
  // Prefill blocks (more rows than attend_block holds): sdpa_prefill_impl.h.
  if (p.rows_per_block > kSdpaMaxRowsPerBlock) {
    attend_range_prefill(p, begin, end);
  } else {
    attend_range(p, begin, end);
  }
}

void sdpa_narrow_avx512(const float* src, uint16_t* dst, int64_t n) { narrow_values(src, dst, n); }

}  // namespace torchlight::llm
