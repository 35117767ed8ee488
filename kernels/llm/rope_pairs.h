// The rotary embedding's arithmetic on one row of pairs, shared by
// torchlight::rope (op_rope.cpp) and rope_sdpa_with_kv_cache
// (op_rope_sdpa_with_kv_cache.cpp) so both give the same floats.
#pragma once

#include <cstdint>

namespace torchlight::llm {

// P pairs (x0, x1) of `x` rotated by c, s [P] into `y`:
// (x0 c - x1 s, x0 s + x1 c).
inline void rotate_pairs(const float* x, const float* c, const float* s, float* y,
                         int64_t pairs) {
  for (int64_t p = 0; p < pairs; ++p) {
    const float x0 = x[2 * p];
    const float x1 = x[2 * p + 1];
    y[2 * p] = x0 * c[p] - x1 * s[p];
    y[2 * p + 1] = x0 * s[p] + x1 * c[p];
  }
}

}  // namespace torchlight::llm
