// Peak resident memory of this process, for the runner's statistics.
#pragma once

#include <cstdint>

namespace torchlight {

/// The process's peak resident set size in bytes: VmHWM from
/// /proc/self/status, else getrusage's ru_maxrss; 0 when neither is
/// available.
uint64_t peak_rss_bytes();

}  // namespace torchlight
