// linear_qs8's VNNI loop (linear_qs8_vnni_impl.h), AVX-VNNI build: 32 bytes a
// step with the 256-bit VEX vpdpbusd. Built with -mavx2 -mavxvnni; run only
// on CPUs with AVX-VNNI (quant_isa.h).
#include <immintrin.h>

#include <cstring>

namespace torchlight::quantized {
namespace {

struct VecQs8 {
  using T = __m256i;
  static constexpr int64_t kBytes = 32;
  static T zero() { return _mm256_setzero_si256(); }
  static T load(const int8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static T load_partial(const int8_t* p, int64_t count) {
    alignas(32) int8_t bytes[32] = {};
    std::memcpy(bytes, p, static_cast<size_t>(count));
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(bytes));
  }
  static T ones() { return _mm256_set1_epi8(1); }
  static T flip(T v) { return _mm256_xor_si256(v, _mm256_set1_epi8(static_cast<char>(0x80))); }
  static T dpbusd(T acc, T u, T w) { return _mm256_dpbusd_avx_epi32(acc, u, w); }
  static __m256i half_sum(T v) { return v; }
};

}  // namespace
}  // namespace torchlight::quantized

#include "kernels/quantized/linear_qs8_vnni_impl.h"

namespace torchlight::quantized {

void linear_qs8_columns_avxvnni(const RowsQs8& rows, int64_t n_begin, int64_t n_end) {
  vnni_linear_qs8(rows, n_begin, n_end);
}

}  // namespace torchlight::quantized
