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

/// Calls fn(part, n_begin, n_end) for `parts` ranges of whole blocks of
/// kColumnsPerChunk columns covering [0, n), one job each: the AMX paths,
/// where each part converts its columns into its own scratch panel.
template <typename Fn>
void parallel_column_parts(int64_t n, int64_t parts, const Fn& fn) {
  const int64_t blocks = (n + kColumnsPerChunk - 1) / kColumnsPerChunk;
  threadpool::parallel_for(static_cast<size_t>(parts), 1, [&](size_t begin, size_t end) {
    for (size_t t = begin; t < end; ++t) {
      const int64_t part = static_cast<int64_t>(t);
      const int64_t c0 = blocks * part / parts * kColumnsPerChunk;
      const int64_t c1 = std::min(n, blocks * (part + 1) / parts * kColumnsPerChunk);
      if (c0 < c1) fn(part, c0, c1);
    }
  });
}

/// `bytes` rounded up to whole 64-byte lines, where scratch regions start.
inline size_t round_up64(size_t bytes) { return (bytes + 63) / 64 * 64; }

/// An AMX path's workspace: the pass's rows (`rows_bytes`, a multiple of
/// 64) first, then one weight panel per column part. `parts` is 0 when the
/// workspace is missing, not 64-byte aligned, or too small for the rows
/// and one panel; else at most one per thread, per block of columns of
/// [0, n) and per panel that fits.
struct PanelScratch {
  char* rows = nullptr;
  char* panels = nullptr;
  int64_t parts = 0;
};

inline PanelScratch carve_panel_scratch(void* scratch, size_t bytes, size_t rows_bytes,
                                        size_t panel_bytes, int64_t n) {
  PanelScratch out;
  auto* base = static_cast<char*>(scratch);
  if (base == nullptr || reinterpret_cast<uintptr_t>(base) % 64 != 0 ||
      bytes < rows_bytes + panel_bytes) {
    return out;
  }
  out.rows = base;
  out.panels = base + rows_bytes;
  out.parts = std::min<int64_t>({(n + kColumnsPerChunk - 1) / kColumnsPerChunk,
                                 static_cast<int64_t>(threadpool::num_threads()),
                                 static_cast<int64_t>((bytes - rows_bytes) / panel_bytes)});
  return out;
}

/// Calls of this many multiply-adds or more always split over the pool:
/// the classifier (stories15m: 9.2M) and every prefill.
inline constexpr int64_t kMinParallelMultiplyAdds = int64_t{1} << 18;

/// Calls of this many or more, and below kMinParallelMultiplyAdds, split
/// only when threadpool::workers_ready(): decode's 288- and 768-wide
/// linears (stories15m: 83K-221K multiply-adds, 4-12 us). On an idle
/// machine decode's back-to-back linears keep the workers spinning, and
/// splitting them is what makes 2 threads pay; on a loaded one workers
/// fall asleep or back off after a stall (a worker descheduled inside its
/// chunk held the caller for a time slice: stories15m decode at 2 threads
/// ran at half the 1-thread speed), and these calls stay on the calling
/// thread, as all of them did before.
inline constexpr int64_t kMinReadyParallelMultiplyAdds = int64_t{1} << 15;

/// Whether a call of `rows` x K x N multiply-adds splits over the pool now.
inline bool linear_runs_parallel(int64_t rows, int64_t k, int64_t n) {
  const int64_t macs = rows * k * n;
  return macs >= kMinParallelMultiplyAdds ||
         (macs >= kMinReadyParallelMultiplyAdds && threadpool::workers_ready());
}

/// parallel_column_chunks for a call of `rows` x K x N multiply-adds:
/// inline unless linear_runs_parallel.
template <typename Fn>
void parallel_column_chunks(int64_t n, int64_t rows, int64_t k, const Fn& fn) {
  if (!linear_runs_parallel(rows, k, n)) {
    fn(0, n);
    return;
  }
  parallel_column_chunks(n, fn);
}

}  // namespace torchlight::quantized
