// PoolSplit: the loop_split.h policy of the optimized library's element-wise
// and copy kernels (op_arith.cpp, op_permute_copy.cpp): loops writing at
// least kMinSplitBytes run over the thread pool, in chunks of whole 64-byte
// lines of out (no line written by two threads), each at least that large;
// smaller ones on the calling thread. The items are independent, so the
// bytes are those of the serial loop.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "extension/threadpool/threadpool.h"

namespace torchlight::optimized {

/// Bytes of out per chunk, at least. An LLM prefill's residual add writes
/// 147 KB (stories15m, 128 rows x 288 floats) in ~9 us on one core, its
/// SwiGLU product 393 KB and each attention permute 147 KB; a chunk of
/// 32 KB is 2 us or more of work, against ~1 us to hand a chunk to a
/// spinning worker (bench/kernels/pool_split_bench.cpp).
inline constexpr int64_t kMinSplitBytes = int64_t{32} << 10;

/// Loops of at least 2 x kMinBytes of out split into chunks of at least kMinBytes.
template <int64_t kMinBytes>
struct PoolSplitOf {
  template <typename Loop>
  static void run(int64_t n, int64_t item_bytes, const Loop& loop) {
    const int64_t bytes = std::max<int64_t>(item_bytes, 1);
    if (n * bytes < 2 * kMinBytes || threadpool::num_threads() == 1) {
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
