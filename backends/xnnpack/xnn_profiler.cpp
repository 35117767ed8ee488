#include "backends/xnnpack/xnn_profiler.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <new>

namespace torchlight {
namespace xnnpack {

uint32_t XnnProfiler::count_named(const char* name, size_t length) const {
  uint32_t n = 0;
  const char* id = ids_;
  for (size_t i = 0; i < num_operators_; ++i, id += std::strlen(id) + 1) {
    n += std::strncmp(id, name, length) == 0 && std::strncmp(id + length, " #", 2) == 0;
  }
  return n;
}

bool XnnProfiler::init(xnn_runtime_t runtime, MemoryAllocator* allocator,
                       Span<const XnnProfiler* const> earlier) {
  size_t count = 0;
  size_t written = 0;
  if (xnn_get_runtime_profiling_info(runtime, xnn_profile_info_num_operators, sizeof(count),
                                     &count, &written) != xnn_status_success ||
      count == 0) {
    return false;
  }
  // The first call only reports the size the names need.
  size_t names_size = 0;
  xnn_status s = xnn_get_runtime_profiling_info(runtime, xnn_profile_info_operator_name, 0,
                                                nullptr, &names_size);
  if (s != xnn_status_out_of_memory && s != xnn_status_success) return false;
  std::unique_ptr<char[]> names(new (std::nothrow) char[names_size + 1]);
  if (names == nullptr) return false;
  if (xnn_get_runtime_profiling_info(runtime, xnn_profile_info_operator_name, names_size,
                                     names.get(), &written) != xnn_status_success) {
    return false;
  }
  names[names_size] = '\0';
  // Each id is the name plus " #<n>" (at most 11 more characters).
  const size_t ids_capacity = names_size + count * 12 + 1;
  char* ids = static_cast<char*>(allocator->allocate(ids_capacity, 1));
  auto* timings = allocator->allocate_array<uint64_t>(count);
  if (ids == nullptr || timings == nullptr) return false;
  const char* name = names.get();
  size_t used = 0;
  for (size_t i = 0; i < count; ++i) {
    if (name >= names.get() + names_size) return false;  // Fewer names than operators.
    // n-th operator of this name: count earlier equal names (load time only).
    uint32_t nth = 1;
    for (const char* before = names.get(); before < name; before += std::strlen(before) + 1) {
      nth += std::strcmp(before, name) == 0;
    }
    for (const XnnProfiler* other : earlier) nth += other->count_named(name, std::strlen(name));
    const int n = std::snprintf(ids + used, ids_capacity - used, "%s #%u", name, nth);
    if (n < 0 || static_cast<size_t>(n) >= ids_capacity - used) return false;
    used += static_cast<size_t>(n) + 1;
    name += std::strlen(name) + 1;
  }
  ids_ = ids;
  timings_ = timings;
  num_operators_ = count;
  return true;
}

void XnnProfiler::report(xnn_runtime_t runtime, EventTracer* tracer, uint64_t start_ns) const {
  if (num_operators_ == 0 || tracer == nullptr) return;
  size_t written = 0;
  if (xnn_get_runtime_profiling_info(runtime, xnn_profile_info_operator_timing,
                                     num_operators_ * sizeof(uint64_t), timings_,
                                     &written) != xnn_status_success) {
    return;
  }
  uint64_t t = start_ns;
  const char* id = ids_;
  for (size_t i = 0; i < num_operators_; ++i) {
    const uint64_t end = t + timings_[i] * 1000;  // Microseconds to ns.
    tracer->log_profiling_delegate(id, -1, t, end, nullptr, 0);
    t = end;
    id += std::strlen(id) + 1;
  }
}

}  // namespace xnnpack
}  // namespace torchlight
