// Transparent huge pages for large ranges FileDataLoader reads into the heap.
//
// Decode streams every weight once per token. Read into 4 KiB heap pages,
// stories110m's weights decoded at 26.3-28.3 tok/s (fp32) and 65.6-68.5
// (int8) against 32.9-34.6 and 68.9-71.3 on 2 MiB pages (6 alternating
// rounds each, 1 thread, AMD EPYC Zen 1 under QEMU, session 23): 1.21x
// and 1.05x, now as fast as mapping the file. So ranges of 2 MiB or more
// are allocated 2 MiB-aligned and marked MADV_HUGEPAGE before the read
// touches them. (MmapDataLoader maps the page cache and does not ask:
// mapping the weights' 2 MiB page-cache folios with 2 MiB entries measured
// no faster here than with 4 KiB ones, 0.97-1.02x.)
// A hint only: without transparent huge pages (other systems, THP "never")
// the same bytes load on small pages. TORCHLIGHT_HUGE_PAGES=0 in the
// environment turns it off (for comparisons).
#pragma once

#include <cstddef>

namespace torchlight {

/// The huge page size large loads align to.
inline constexpr size_t kHugePageBytes = size_t{2} << 20;

/// Whether a range of `bytes` should ask for huge pages: Linux, bytes >=
/// kHugePageBytes and TORCHLIGHT_HUGE_PAGES not "0".
bool want_huge_pages(size_t bytes);

/// Marks [data, data + bytes) MADV_HUGEPAGE (data page-aligned); failures
/// are ignored (a hint). No-op off Linux.
void advise_huge_pages(void* data, size_t bytes);

}  // namespace torchlight
