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

}  // namespace torchlight::quantized
