// The platform layer: the only place the runtime touches the OS.
//
// Every function has a weak default in default_platform.cpp; a port or an
// application overrides any of them at link time by defining a strong symbol
// of the same name.
#pragma once

#include <cstdint>

extern "C" {

enum TlLogLevel : int {
  kTlLogDebug = 0,
  kTlLogInfo = 1,
  kTlLogWarning = 2,
  kTlLogError = 3,
};

/// Writes one log line. `file` and `line` name the call site; `message` is
/// already formatted and has no trailing newline.
void tl_platform_log(TlLogLevel level, const char* file, int line, const char* message);

/// Nanoseconds from an arbitrary fixed point; never goes backwards.
uint64_t tl_platform_monotonic_ns(void);

/// Ends the process. Only for broken internal invariants, never for bad input.
[[noreturn]] void tl_platform_abort(void);

}  // extern "C"
