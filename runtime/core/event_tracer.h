// EventTracer: the hooks a Method calls while it loads and runs, so a
// profiler or debugger (devtools/) can observe without the core knowing it.
// Every hook is optional; the core calls none when no tracer is given.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/evalue.h"

namespace torchlight {

/// Returned by begin_* and passed back to the matching end_*.
struct EventTracerEntry {
  uint64_t id = 0;
  uint64_t start_ns = 0;
};

class EventTracer {
 public:
  virtual ~EventTracer() = default;

  /// Around a whole method load or execute. `name` is the method name.
  virtual EventTracerEntry begin_method(const char* /*name*/, bool /*is_load*/) { return {}; }
  virtual void end_method(EventTracerEntry /*entry*/) {}

  /// Around one instruction. `name` is the operator ("aten::add.out"), the
  /// backend id for a delegate call, or the instruction kind.
  virtual EventTracerEntry begin_instruction(size_t /*chain*/, size_t /*index*/,
                                             const char* /*name*/) {
    return {};
  }
  virtual void end_instruction(EventTracerEntry /*entry*/) {}

  /// An intermediate value after an instruction wrote it (debug mode).
  virtual void log_value(size_t /*value_index*/, const EValue& /*value*/) {}
};

}  // namespace torchlight
