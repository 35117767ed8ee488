// The fused inverted-residual rows in plain C++ (8-float vectors the
// compiler may map to whatever SIMD the target has), for CPUs without AVX2.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/optimized/fused/inverted_residual_layout.h"

namespace torchlight {
namespace optimized {
namespace {

struct Floats8 {
  float v[8];
};

struct Vec {
  using T = Floats8;
  static constexpr size_t kLanes = 8;
  static constexpr size_t kMaxVecs = 2;
  static constexpr int pixels(int nv) { return nv == 1 ? 4 : 2; }
  template <typename F>
  static T each(F f) {
    T r;
    for (size_t i = 0; i < kLanes; ++i) r.v[i] = f(i);
    return r;
  }
  static T zero() { return set1(0.0f); }
  static T load(const float* p) { return load_n(p, kLanes); }
  static void store(float* p, T v) { store_n(p, v, kLanes); }
  static T set1(float f) { return each([&](size_t) { return f; }); }
  static T fma(T a, T b, T c) { return each([&](size_t i) { return a.v[i] * b.v[i] + c.v[i]; }); }
  static T min(T a, T b) { return each([&](size_t i) { return std::min(a.v[i], b.v[i]); }); }
  static T max(T a, T b) { return each([&](size_t i) { return std::max(a.v[i], b.v[i]); }); }
  static T add(T a, T b) { return each([&](size_t i) { return a.v[i] + b.v[i]; }); }
  static T load_n(const float* p, size_t n) {
    return each([&](size_t i) { return i < n ? p[i] : 0.0f; });
  }
  static void store_n(float* p, T v, size_t n) {
    for (size_t i = 0; i < n; ++i) p[i] = v.v[i];
  }
};

}  // namespace

#define TL_INVERTED_RESIDUAL_ROWS inverted_residual_rows_generic
#include "kernels/optimized/fused/inverted_residual_kernel.inc"

}  // namespace optimized
}  // namespace torchlight
