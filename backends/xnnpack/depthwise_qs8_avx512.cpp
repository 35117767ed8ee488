// depthwise_qs8.h's kernel on AVX-512F/BW/VL: tap pairs through vpmaddwd.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "backends/xnnpack/depthwise_qs8.h"
#include "backends/xnnpack/depthwise_qs8_layout.h"

namespace torchlight {
namespace xnnpack {
namespace {

inline __m512i accumulate_pair(__m512i acc, __m512i taps, __m512i weights) {
  return _mm512_add_epi32(acc, _mm512_madd_epi16(taps, weights));
}

}  // namespace

#define DEPTHWISE_QS8_TARGET
#define DEPTHWISE_QS8_NAME depthwise_qs8_rows_avx512
void DEPTHWISE_QS8_NAME(const DepthwiseQs8Shape&, const DepthwiseQs8Quant&, const void*,
                        const int8_t*, int8_t*, size_t, size_t);
#include "backends/xnnpack/depthwise_qs8_kernel.inc"

}  // namespace xnnpack
}  // namespace torchlight
