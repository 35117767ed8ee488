// Deterministic inputs for the sdpa benchmarks (sdpa_bench.cpp,
// sdpa_cold_bench.cpp): n values in [-1, 1) from a 64-bit LCG.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace torchlight::llm::bench {

inline std::vector<double> random_values(size_t n, uint64_t seed) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 1;
  std::vector<double> out(n);
  for (double& v : out) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    v = static_cast<double>(x >> 11) / 4503599627370496.0 - 1.0;  // [-1, 1)
  }
  return out;
}

}  // namespace torchlight::llm::bench
