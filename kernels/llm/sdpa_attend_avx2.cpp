// The attention loops (sdpa_attend_impl.h), avx2 build.
// Built with -mavx2 -mfma (CMakeLists.txt), 8-float vectors; chosen at run time
// only on CPUs with both (sdpa_dispatch.cpp).
#define TL_VEC_LANES 8
#include "kernels/llm/sdpa_attend_impl.h"

namespace torchlight::llm {

void sdpa_attend_avx2(const SdpaProblem& p, size_t begin, size_t end) {
  attend_range(p, begin, end);
}

}  // namespace torchlight::llm
