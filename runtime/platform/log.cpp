#include "runtime/platform/log.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>

namespace torchlight {
namespace {
std::atomic<int> g_min_level{kTlLogWarning};
}  // namespace

void set_min_log_level(TlLogLevel level) { g_min_level.store(level); }
TlLogLevel min_log_level() { return static_cast<TlLogLevel>(g_min_level.load()); }

void log_message(TlLogLevel level, const char* file, int line, const char* format, ...) {
  char buffer[512];
  va_list args;
  va_start(args, format);
  vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  tl_platform_log(level, file, line, buffer);
}

}  // namespace torchlight
