// Logging macros over tl_platform_log. Messages below the level set with
// set_min_log_level are dropped before formatting.
#pragma once

#include "runtime/platform/platform.h"

namespace torchlight {

void set_min_log_level(TlLogLevel level);
TlLogLevel min_log_level();

/// Formats and forwards to tl_platform_log. Use TL_LOG instead.
void log_message(TlLogLevel level, const char* file, int line, const char* format, ...)
    __attribute__((format(printf, 4, 5)));

}  // namespace torchlight

#define TL_LOG(level, ...)                                                 \
  do {                                                                     \
    if ((level) >= ::torchlight::min_log_level())                          \
      ::torchlight::log_message((level), __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)
