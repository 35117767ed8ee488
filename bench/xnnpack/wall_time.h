// Wall-clock timing for the bench/xnnpack floors: the best per-call time
// over `rounds` rounds of `calls` calls.
#pragma once

#include <algorithm>
#include <chrono>

namespace torchlight::bench {

inline double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

template <typename F>
double best_ms(int rounds, int calls, F&& f) {
  double best = 1e30;
  for (int r = 0; r < rounds; ++r) {
    const double t0 = now_ms();
    for (int i = 0; i < calls; ++i) f();
    best = std::min(best, (now_ms() - t0) / calls);
  }
  return best;
}

}  // namespace torchlight::bench
