// The platform layer's memory advice (platform.h: weak defaults in
// default_platform.cpp, overridable at link time). Its own header so the
// many users of platform.h do not depend on it.
#pragma once

#include <cstddef>

extern "C" {

/// Advises the OS that the whole pages inside [data, data + bytes) may leave
/// resident memory; their contents stay (a later read brings them back).
/// Linux: madvise(MADV_PAGEOUT), which keeps file-backed and anonymous
/// contents alike (never MADV_DONTNEED, which zeroes private anonymous
/// pages); anonymous pages only leave where there is swap. A no-op
/// elsewhere, and whenever the OS declines (an mlocked range, a kernel
/// before 5.4).
void tl_platform_release_resident(const void* data, size_t bytes);

}  // extern "C"
