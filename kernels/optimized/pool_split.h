// PoolSplit: the loop_split.h policy of the optimized library's element-wise
// and copy kernels (op_arith.cpp, op_permute_copy.cpp): a loop writing at
// least kAlwaysSplitBytes of out runs over the thread pool, one of at least
// 2 x kMinSplitBytes only while threadpool::workers_ready() (the workers
// spinning, no back-off after a stall), as the quantized linears split
// their mid-size calls; chunks are whole 64-byte lines of out (no line
// written by two threads), at least kMinSplitBytes each; anything else
// runs on the calling thread. The items are independent, so the bytes are
// those of the serial loop.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "extension/threadpool/threadpool.h"

namespace torchlight::optimized {

/// Bytes of out per chunk, at least. An LLM prefill's residual add writes
/// 147 KB (stories15m, 128 rows x 288 floats) in ~8 us on one core, its
/// SwiGLU product 393 KB and each attention permute 147 KB; a chunk of
/// 32 KB is 2 us or more of work, against ~1 us to hand a chunk to a
/// spinning worker.
inline constexpr int64_t kMinSplitBytes = int64_t{32} << 10;

/// Loops writing this much or more split whatever the workers are doing.
/// bench/kernels/pool_split_bench.cpp (an add loop, 2 threads, wall time,
/// medians of 5, load average 2.4-3.6 on 2 cores, two runs): 147 KB serial
/// 7.4-7.9 us, split 8.2-10.4; 393 KB 20-25 against 22-27; 1 MB 140-150
/// against 129-139; 4 MB 631-671 against 595-605. Below 1 MB a split
/// paid nothing while another process held a core, so it is left to
/// workers_ready() there.
inline constexpr int64_t kAlwaysSplitBytes = int64_t{1} << 20;

/// PoolSplit with chunks of at least kMinBytes (the bench varies it).
template <int64_t kMinBytes>
struct PoolSplitOf {
  template <typename Loop>
  static void run(int64_t n, int64_t item_bytes, const Loop& loop) {
    const int64_t bytes = std::max<int64_t>(item_bytes, 1);
    const int64_t total = n * bytes;
    if (threadpool::num_threads() == 1 || total < 2 * kMinBytes ||
        (total < kAlwaysSplitBytes && !threadpool::workers_ready())) {
      loop(int64_t{0}, n);
      return;
    }
    // Blocks of whole lines (items larger than a line are blocks alone).
    const int64_t per_block = std::max<int64_t>(1, 64 / bytes);
    const int64_t blocks = (n + per_block - 1) / per_block;
    const int64_t min_blocks = std::max<int64_t>(1, kMinBytes / (per_block * bytes));
    threadpool::parallel_for(static_cast<size_t>(blocks), static_cast<size_t>(min_blocks),
                             [&](size_t begin, size_t end) {
                               loop(static_cast<int64_t>(begin) * per_block,
                                    std::min(n, static_cast<int64_t>(end) * per_block));
                             });
  }
};

using PoolSplit = PoolSplitOf<kMinSplitBytes>;

}  // namespace torchlight::optimized
