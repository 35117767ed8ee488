#include "tools/cli/timing.h"

#include <algorithm>
#include <utility>

namespace torchlight {
namespace cli {

LatencyStats summarize_latency(std::vector<double> samples_ms) {
  LatencyStats stats;
  stats.runs = samples_ms.size();
  if (samples_ms.empty()) return stats;
  std::sort(samples_ms.begin(), samples_ms.end());
  const size_t n = samples_ms.size();
  stats.median_ms = n % 2 == 1 ? samples_ms[n / 2] : (samples_ms[n / 2 - 1] + samples_ms[n / 2]) / 2;
  stats.min_ms = samples_ms.front();
  stats.max_ms = samples_ms.back();
  return stats;
}

}  // namespace cli
}  // namespace torchlight
