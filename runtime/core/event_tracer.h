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

/// What an instruction does, so a tracer can name it as upstream's ETDump
/// does ("OPERATOR_CALL", "DELEGATE_CALL", ...).
enum class InstructionKind : uint8_t { kKernel, kDelegate, kMove, kJumpFalse, kFree };

class EventTracer {
 public:
  virtual ~EventTracer() = default;

  /// Around a whole method load or execute. `name` is the method name.
  virtual EventTracerEntry begin_method(const char* /*name*/, bool /*is_load*/) { return {}; }
  virtual void end_method(EventTracerEntry /*entry*/) {}

  /// Around one instruction. `name` is the operator ("aten::add.out"), the
  /// backend id for a delegate call, or the instruction kind; it outlives the
  /// method.
  virtual EventTracerEntry begin_instruction(size_t /*chain*/, size_t /*index*/,
                                             const char* /*name*/, InstructionKind /*kind*/) {
    return {};
  }
  virtual void end_instruction(EventTracerEntry /*entry*/) {}

  /// A value after an instruction wrote it: a kernel's out argument, or each
  /// argument of a delegate call (debug mode).
  virtual void log_value(size_t /*value_index*/, const EValue& /*value*/) {}

  /// Output `index` of the method, after a successful execute.
  virtual void log_output(size_t /*index*/, const EValue& /*value*/) {}

  // Delegate events, called by backends through
  // BackendExecutionContext::event_tracer. A delegate names its event either
  // by `name` (non-null: a string debug id) or, when `name` is null, by the
  // integer `id`. `name` and `metadata` need only live until the call returns.

  /// Starts a delegate event timed by the tracer's clock.
  virtual EventTracerEntry start_profiling_delegate(const char* /*name*/, int32_t /*id*/) {
    return {};
  }
  /// Ends it; `metadata` (may be null when `metadata_size` is 0) is opaque
  /// backend bytes kept with the event.
  virtual void end_profiling_delegate(EventTracerEntry /*entry*/, const void* /*metadata*/,
                                      size_t /*metadata_size*/) {}
  /// A delegate event the backend timed itself (its own clock, in ns).
  virtual void log_profiling_delegate(const char* /*name*/, int32_t /*id*/, uint64_t /*start_ns*/,
                                      uint64_t /*end_ns*/, const void* /*metadata*/,
                                      size_t /*metadata_size*/) {}
};

}  // namespace torchlight
