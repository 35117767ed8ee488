// Default (POSIX) platform layer. Every symbol is weak so a port can replace
// it at link time without touching the runtime.
#include <cstdio>
#include <cstdlib>
#include <ctime>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#endif

#include "runtime/platform/platform.h"
#include "runtime/platform/release_resident.h"

extern "C" {

__attribute__((weak)) void tl_platform_log(TlLogLevel level, const char* file, int line,
                                           const char* message) {
  static const char kLetters[] = {'D', 'I', 'W', 'E'};
  char letter = (level >= kTlLogDebug && level <= kTlLogError) ? kLetters[level] : '?';
  fprintf(stderr, "%c torchlight %s:%d] %s\n", letter, file, line, message);
}

__attribute__((weak)) uint64_t tl_platform_monotonic_ns(void) {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

__attribute__((weak)) void tl_platform_release_resident(const void* data, size_t bytes) {
#if defined(__linux__) && defined(MADV_PAGEOUT)
  const long page_size = sysconf(_SC_PAGESIZE);
  if (data == nullptr || page_size <= 0) return;
  const auto page = static_cast<uintptr_t>(page_size);
  const auto begin = reinterpret_cast<uintptr_t>(data);
  if (bytes > UINTPTR_MAX - begin) return;  // The range wraps: not memory we own.
  // Only whole pages: a page shared with a neighbour stays resident.
  const uintptr_t first = (begin + page - 1) / page * page;
  const uintptr_t last = (begin + bytes) / page * page;
  if (first >= last) return;
  // Advice only: a refusal (EINVAL on mlocked pages, kernels before 5.4)
  // leaves the pages resident, which is still correct.
  (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_PAGEOUT);
#else
  (void)data, (void)bytes;
#endif
}

__attribute__((weak)) void tl_platform_abort(void) { abort(); }

}  // extern "C"
