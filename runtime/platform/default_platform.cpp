// Default (POSIX) platform layer. Every symbol is weak so a port can replace
// it at link time without touching the runtime.
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "runtime/platform/platform.h"

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

__attribute__((weak)) void tl_platform_abort(void) { abort(); }

}  // extern "C"
