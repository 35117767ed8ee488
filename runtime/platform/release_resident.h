// The platform layer's memory advice (as platform.h: a weak default, in
// release_resident.cpp, overridable at link time). Its own header so the
// many users of platform.h do not depend on it.
#pragma once

#include <cstddef>

extern "C" {

/// Advises the OS that the whole pages inside [data, data + bytes) may leave
/// this process's resident memory; their contents stay (a later read brings
/// them back). Linux (release_resident.cpp): inside a mapping of a file that
/// is not writable, madvise(MADV_DONTNEED) (the page cache keeps the pages);
/// elsewhere madvise(MADV_PAGEOUT), which keeps anonymous and written pages'
/// contents (they only leave where there is swap). A no-op on other
/// systems, and whenever the OS declines (an mlocked range, a kernel before
/// 5.4). Load time only: each call reads /proc/self/maps.
void tl_platform_release_resident(const void* data, size_t bytes);

}  // extern "C"
