// Vector basics and e^x shared by the LLM kernels' per-instruction-set loops
// (sdpa_attend_impl.h, pointwise_impl.h). Include it only from those
// headers: everything here has internal linkage, so each differently
// flagged file gets its own copy (an AVX-512 inline function shared with a
// generic build would crash older CPUs). GCC and Clang only (vector
// extensions).
#pragma once

#include <cstdint>

namespace torchlight::llm {
namespace {

// GCC/Clang generic vectors of TL_VEC_LANES floats, which the including
// file sets to its register width: 16 (AVX-512), 8 (AVX2), 4 (SSE, NEON).
// Helpers take and return them only inside these headers (all inlined).
#ifndef TL_VEC_LANES
#error "define TL_VEC_LANES (4, 8 or 16) before including vec_math_impl.h"
#endif
constexpr int kLanes = TL_VEC_LANES;
typedef float Vec4 __attribute__((vector_size(4 * sizeof(float))));
typedef float Vec8 __attribute__((vector_size(8 * sizeof(float))));
typedef float Vec16 __attribute__((vector_size(16 * sizeof(float))));
// One of the above, so the overloads below apply to it.
typedef float VecF __attribute__((vector_size(kLanes * sizeof(float))));
typedef uint32_t VecU __attribute__((vector_size(kLanes * sizeof(uint32_t))));
typedef int32_t VecI __attribute__((vector_size(kLanes * sizeof(int32_t))));

inline int64_t min_i64(int64_t a, int64_t b) { return a < b ? a : b; }

// x in every lane. (x - 0 rather than 0 + x: the compiler may fold the
// former to a plain broadcast, since it keeps -0.0 as it is.)
inline VecF splat(float x) { return x - VecF{}; }

inline VecF load(const float* p) {
  VecF v;
  __builtin_memcpy(&v, p, sizeof(v));
  return v;
}

inline void store(float* p, VecF v) { __builtin_memcpy(p, &v, sizeof(v)); }

// Low and high halves of a vector.
inline Vec4 low(Vec8 v) { return __builtin_shufflevector(v, v, 0, 1, 2, 3); }
inline Vec4 high(Vec8 v) { return __builtin_shufflevector(v, v, 4, 5, 6, 7); }
inline Vec8 low(Vec16 v) { return __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7); }
inline Vec8 high(Vec16 v) { return __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15); }

// Sum of the lanes, halving the width each step.
inline float lane_sum(Vec4 v) { return (v[0] + v[2]) + (v[1] + v[3]); }
inline float lane_sum(Vec8 v) { return lane_sum(low(v) + high(v)); }
inline float lane_sum(Vec16 v) { return lane_sum(low(v) + high(v)); }
// e^x per lane. x = n ln2 + r with |r| <= ln2 / 2; e^r from its Taylor
// series to r^7 (truncation below 1e-8 relative, under float rounding); 2^n
// built in the exponent bits. x < -87 (e^x < 2^-125) gives 0, -inf
// included; x > 88 gives e^88; NaN gives NaN.
inline VecF exp_approx(VecF x) {
  const float kLog2e = 1.44269504088896341f;
  const float kLn2Hi = 0.693359375f;               // 355/512: n * kLn2Hi is exact.
  const float kLn2Lo = -2.12194440054690583e-4f;   // ln 2 - kLn2Hi.
  const float kRound = 12582912.0f;                // 1.5 * 2^23: adding it rounds to an integer.
  const uint32_t kRoundBits = 0x4B400000u;         // Its bit pattern.
  const VecF lo = splat(-87.0f);
  const VecF hi = splat(88.0f);
  VecF c = x < lo ? lo : x;  // NaN lanes stay NaN (comparisons are false).
  c = c > hi ? hi : c;
  const VecF t = c * kLog2e + kRound;  // kRound + n, exactly.
  const VecF n = t - kRound;
  const VecF r = (c - n * kLn2Hi) - n * kLn2Lo;
  VecF poly = splat(1.0f / 5040.0f);
  poly = poly * r + 1.0f / 720.0f;
  poly = poly * r + 1.0f / 120.0f;
  poly = poly * r + 1.0f / 24.0f;
  poly = poly * r + 1.0f / 6.0f;
  poly = poly * r + 0.5f;
  poly = poly * r + 1.0f;
  poly = poly * r + 1.0f;
  VecU bits;
  __builtin_memcpy(&bits, &t, sizeof(bits));
  bits = (bits - kRoundBits + 127u) << 23;  // n + 127 in [1, 254]: a normal 2^n.
  VecF pow2n;
  __builtin_memcpy(&pow2n, &bits, sizeof(pow2n));
  const VecF y = poly * pow2n;
  return x < lo ? VecF{} : y;
}

inline float exp_approx(float x) {
  VecF v = splat(x);
  return exp_approx(v)[0];
}

}  // namespace
}  // namespace torchlight::llm
