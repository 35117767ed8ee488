// Timing helpers for the CLI: a monotonic stopwatch and latency statistics.
#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

namespace torchlight {
namespace cli {

/// Measures elapsed wall time on the monotonic (steady) clock, so a clock
/// adjustment during a run cannot produce a negative or inflated time.
class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  void restart() { start_ = std::chrono::steady_clock::now(); }
  double elapsed_ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
        .count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

struct LatencyStats {
  size_t runs = 0;
  double median_ms = 0;  // Mean of the two middle samples for an even count.
  double min_ms = 0;
  double max_ms = 0;
};

/// Statistics of `samples_ms`; all zero for an empty list.
LatencyStats summarize_latency(std::vector<double> samples_ms);

}  // namespace cli
}  // namespace torchlight
