#include "extension/llm/runner/peak_rss.h"

#include <sys/resource.h>

#include <cstdio>
#include <cstring>

namespace torchlight {

uint64_t peak_rss_bytes() {
  // VmHWM is exact to the page; ru_maxrss is the fallback where /proc is
  // not mounted (on Linux it is in KiB).
  if (std::FILE* status = std::fopen("/proc/self/status", "r")) {
    char line[256];
    unsigned long long kib = 0;
    bool found = false;
    while (std::fgets(line, sizeof(line), status) != nullptr) {
      if (std::strncmp(line, "VmHWM:", 6) == 0) {
        found = std::sscanf(line + 6, "%llu", &kib) == 1;
        break;
      }
    }
    std::fclose(status);
    if (found) return static_cast<uint64_t>(kib) * 1024;
  }
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) == 0 && usage.ru_maxrss > 0) {
    return static_cast<uint64_t>(usage.ru_maxrss) * 1024;
  }
  return 0;
}

}  // namespace torchlight
