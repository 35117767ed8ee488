// XnnProfiler: per-operator timings of one XNNPACK runtime, reported as
// delegate events the way upstream's XNNPACK delegate names them
// ("<XNNPACK operator name> #<n-th of that name>"). Used only when a Method
// has an event tracer: the runtime must then be created with
// XNN_FLAG_BASIC_PROFILING.
#pragma once

#include <xnnpack.h>

#include <cstddef>
#include <cstdint>

#include "runtime/core/event_tracer.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/core/span.h"

namespace torchlight {
namespace xnnpack {

class XnnProfiler {
 public:
  /// Reads `runtime`'s operator names and keeps the event ids and a timing
  /// array in `allocator` (the delegate's; it must outlive this). Returns
  /// false, leaving the profiler off, when XNNPACK gives no profile or the
  /// allocator is full: profiling is best effort, never a load failure.
  /// `earlier` (may be empty) are the profilers of runtimes that run before
  /// this one in the same delegate: numbering continues from theirs, so
  /// every event id stays unique.
  bool init(xnn_runtime_t runtime, MemoryAllocator* allocator,
            Span<const XnnProfiler* const> earlier = {});
  bool enabled() const { return num_operators_ > 0; }

  /// After an invoke that started at `start_ns`: one delegate event per
  /// operator. XNNPACK gives durations only (whole microseconds), so each
  /// operator is taken to start where the previous one ended, as upstream
  /// does.
  void report(xnn_runtime_t runtime, EventTracer* tracer, uint64_t start_ns) const;

  /// How many of this profiler's operators are named `name`.
  uint32_t count_named(const char* name, size_t length) const;

 private:
  size_t num_operators_ = 0;
  const char* ids_ = nullptr;  // num_operators_ NUL-terminated ids, back to back.
  uint64_t* timings_ = nullptr;
};

}  // namespace xnnpack
}  // namespace torchlight
