// How the fused quantized linears (8da4w, int8, qs8) spread a call over the
// thread pool: the output columns in chunks of kColumnsPerChunk, one job per
// call, so each chunk's weights stay in cache while they serve every row
// block and prefill pays one fork-join per operator.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "extension/threadpool/threadpool.h"

namespace torchlight::quantized {

inline constexpr int64_t kColumnsPerChunk = 16;

/// Calls fn(n_begin, n_end) for column chunks covering [0, n), in parallel.
template <typename Fn>
void parallel_column_chunks(int64_t n, const Fn& fn) {
  const size_t chunks = static_cast<size_t>((n + kColumnsPerChunk - 1) / kColumnsPerChunk);
  threadpool::parallel_for(chunks, 1, [&](size_t begin, size_t end) {
    fn(static_cast<int64_t>(begin) * kColumnsPerChunk,
       std::min<int64_t>(static_cast<int64_t>(end) * kColumnsPerChunk, n));
  });
}

/// Calls below this many multiply-adds run on the calling thread: a
/// fork-join costs microseconds on an idle machine, and on a loaded one a
/// worker descheduled inside its chunk holds the caller for a time slice,
/// milliseconds (stories15m decode at 2 threads ran at half the 1-thread
/// speed under load). Decode's 288-wide linears (83K-221K multiply-adds,
/// ~10-20 us) stay on one thread; its classifier (9.2M) and every prefill
/// split.
inline constexpr int64_t kMinParallelMultiplyAdds = int64_t{1} << 18;

/// Whether a call of `rows` x K x N multiply-adds splits over the pool.
inline bool linear_runs_parallel(int64_t rows, int64_t k, int64_t n) {
  return rows * k * n >= kMinParallelMultiplyAdds;
}

/// parallel_column_chunks for a call of `rows` x K x N multiply-adds:
/// inline when that is below kMinParallelMultiplyAdds.
template <typename Fn>
void parallel_column_chunks(int64_t n, int64_t rows, int64_t k, const Fn& fn) {
  if (!linear_runs_parallel(rows, k, n)) {
    fn(0, n);
    return;
  }
  parallel_column_chunks(n, fn);
}

}  // namespace torchlight::quantized
