// Debug-only checks for internal invariants. Data from files or callers is
// checked with TL_CHECK_OR_RETURN (result.h) instead, in every build.
#pragma once

#include "runtime/platform/log.h"

#ifdef NDEBUG
#define TL_DEBUG_ASSERT(cond) ((void)0)
#else
#define TL_DEBUG_ASSERT(cond)                                      \
  do {                                                             \
    if (!(cond)) {                                                 \
      ::torchlight::log_message(kTlLogError, __FILE__, __LINE__,   \
                                "internal assertion failed: %s", #cond); \
      tl_platform_abort();                                         \
    }                                                              \
  } while (0)
#endif
