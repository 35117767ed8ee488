// tl_platform_release_resident's default (weak, as default_platform.cpp's are).
//
// Linux: pages of a read-only private file mapping (a program mapped by the
// mmap loader) are dropped from this process with MADV_DONTNEED: a later
// read maps them again from the page cache or the file, unchanged, and the
// page cache keeps them for the next run and for other readers (an
// embedding sharing a released weight looks up rows in it every token).
// Anything else (heap, a writable mapping) gets MADV_PAGEOUT, which keeps
// every page's contents (anonymous ones go to swap, or stay without it);
// never MADV_DONTNEED, which would zero them. MADV_PAGEOUT on the file
// mapping would also evict the page cache: each run then read the program
// from disk again, and each token's embedding row faulted to disk.
#include "runtime/platform/release_resident.h"

#if defined(__linux__)
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

// Whether [first, last) lies inside one mapping of /proc/self/maps that is
// not writable and backed by a file (a non-zero inode); false when the table
// cannot be read. Reads it with a stack buffer: no heap. (A private mapping
// written and then made read-only would pass too; nothing here does that:
// the mmap loader maps PROT_READ.)
bool in_read_only_file_mapping(uintptr_t first, uintptr_t last) {
  const int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buffer[4096];
  size_t held = 0;
  bool found = false, done = false;
  while (!done) {
    const ssize_t got = read(fd, buffer + held, sizeof(buffer) - 1 - held);
    if (got <= 0) break;
    held += static_cast<size_t>(got);
    buffer[held] = '\0';
    char* line = buffer;
    char* end;
    while ((end = std::strchr(line, '\n')) != nullptr) {
      *end = '\0';
      // "start-end perms offset dev inode path"
      char* cursor;
      const uintptr_t start = std::strtoull(line, &cursor, 16);
      const uintptr_t stop = *cursor == '-' ? std::strtoull(cursor + 1, &cursor, 16) : 0;
      if (start <= first && last <= stop) {
        char perms[5] = {};
        unsigned long long offset = 0, inode = 0;
        char device[32] = {};
        if (std::sscanf(cursor, " %4s %llx %31s %llu", perms, &offset, device, &inode) == 4) {
          found = perms[1] == '-' && inode != 0;
        }
        done = true;
        break;
      }
      line = end + 1;
    }
    // Keep the unfinished line; a line longer than the buffer ends the search.
    held = static_cast<size_t>(buffer + held - line);
    if (held == sizeof(buffer) - 1) break;
    std::memmove(buffer, line, held);
  }
  close(fd);
  return found;
}

}  // namespace
#endif

extern "C" {

__attribute__((weak)) void tl_platform_release_resident(const void* data, size_t bytes) {
#if defined(__linux__)
  const long page_size = sysconf(_SC_PAGESIZE);
  if (data == nullptr || page_size <= 0) return;
  const auto page = static_cast<uintptr_t>(page_size);
  const auto begin = reinterpret_cast<uintptr_t>(data);
  if (bytes > UINTPTR_MAX - begin) return;  // The range wraps: not memory we own.
  // Only whole pages: a page shared with a neighbour stays resident.
  const uintptr_t first = (begin + page - 1) / page * page;
  const uintptr_t last = (begin + bytes) / page * page;
  if (first >= last) return;
  // Advice only: a refusal (EINVAL on mlocked pages, kernels before 5.4 for
  // MADV_PAGEOUT) leaves the pages resident, which is still correct.
  if (in_read_only_file_mapping(first, last)) {
    (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
    return;
  }
#if defined(MADV_PAGEOUT)
  (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_PAGEOUT);
#endif
#else
  (void)data, (void)bytes;
#endif
}

}  // extern "C"
