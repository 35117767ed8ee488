// Replaces the platform's log hook (platform.h) with one that drops every
// line: the fuzzers reject millions of bad files, and printing each reason
// would cost more than parsing them. Errors still reach the harness as
// Status values.
#include "runtime/platform/platform.h"

extern "C" void tl_platform_log(TlLogLevel, const char*, int, const char*) {}
