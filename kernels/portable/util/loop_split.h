// How a prepared element loop is spread: a policy type with
//   static void run(int64_t n, int64_t item_bytes, const Loop& loop)
// that calls loop(begin, end) over [0, n) items of `item_bytes` bytes each
// (written to out). The portable library runs everything on the calling
// thread (SerialSplit); the optimized library's float32 kernels pass a
// policy that spreads large loops over the thread pool
// (kernels/optimized/pool_split.h). The loops' items are independent, so
// any split gives the same bytes.
#pragma once

#include <cstdint>

namespace torchlight::portable {

struct SerialSplit {
  template <typename Loop>
  static void run(int64_t n, int64_t /*item_bytes*/, const Loop& loop) {
    loop(int64_t{0}, n);
  }
};

}  // namespace torchlight::portable
