#include "extension/data_loader/huge_pages.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>

namespace torchlight {

bool want_huge_pages(size_t bytes) {
#if defined(__linux__)
  if (bytes < kHugePageBytes) return false;
  const char* setting = std::getenv("TORCHLIGHT_HUGE_PAGES");
  return setting == nullptr || std::strcmp(setting, "0") != 0;
#else
  (void)bytes;
  return false;
#endif
}

void advise_huge_pages(void* data, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  (void)::madvise(data, bytes, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

}  // namespace torchlight
