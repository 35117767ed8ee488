// linear_qs8's VNNI loop (linear_qs8_vnni_impl.h), AVX-512 VNNI build: 64
// bytes a step, the tail by a masked load (masked-off bytes are zero and
// never read). Built with -mavx512f -mavx512bw -mavx512vnni; run only on
// CPUs with them (quant_isa.h).
#include <immintrin.h>

#include <cstdint>

namespace torchlight::quantized {
namespace {

struct VecQs8 {
  using T = __m512i;
  static constexpr int64_t kBytes = 64;
  static T zero() { return _mm512_setzero_si512(); }
  static T load(const int8_t* p) { return _mm512_loadu_si512(p); }
  static T load_partial(const int8_t* p, int64_t count) {
    return _mm512_maskz_loadu_epi8((uint64_t{1} << count) - 1, p);  // count < 64
  }
  static T ones() { return _mm512_set1_epi8(1); }
  static T flip(T v) { return _mm512_xor_si512(v, _mm512_set1_epi8(static_cast<char>(0x80))); }
  static T dpbusd(T acc, T u, T w) { return _mm512_dpbusd_epi32(acc, u, w); }
  // Folded to 256 bits for the impl's horizontal sum.
  static __m256i half_sum(T v) {
    return _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
  }
};

}  // namespace
}  // namespace torchlight::quantized

#include "kernels/quantized/linear_qs8_vnni_impl.h"

namespace torchlight::quantized {

void linear_qs8_columns_avx512vnni(const RowsQs8& rows, int64_t n_begin, int64_t n_end) {
  vnni_linear_qs8(rows, n_begin, n_end);
}

}  // namespace torchlight::quantized
