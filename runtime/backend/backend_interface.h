// BackendInterface: what a delegate backend (XNNPACK, the test backend, ...)
// implements. A Method initialises each delegate of its program once, at
// load, and calls execute() for every DelegateCall.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/core/evalue.h"
#include "runtime/core/freeable_buffer.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/core/named_data_map.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace torchlight {

class EventTracer;

/// One compile spec of a delegate; both fields borrow program memory.
struct CompileSpec {
  std::string_view key;
  Span<const uint8_t> value;
};

struct BackendInitContext {
  /// For the delegate's long-lived state; lives as long as the Method.
  MemoryAllocator* runtime_allocator = nullptr;
  /// The method being loaded, for error messages.
  const char* method_name = "";
  /// The method's tracer, or null. A backend may time its init with it and
  /// turn on its own profiling only when it is set.
  EventTracer* event_tracer = nullptr;
  /// The program's named data (delegate constants kept outside the blob),
  /// valid during init only: a backend copies out, or keeps the buffers it
  /// gets, for as long as it reads them. May be null.
  const NamedDataMap* named_data_map = nullptr;

  /// Upstream's accessor for named_data_map.
  const NamedDataMap* get_named_data_map() const { return named_data_map; }
};

struct BackendExecutionContext {
  MemoryAllocator* temp_allocator = nullptr;  // May be null.
  EventTracer* event_tracer = nullptr;        // May be null.
};

/// Opaque per-delegate state returned by init().
using DelegateHandle = void;

class BackendInterface {
 public:
  virtual ~BackendInterface() = default;

  /// Whether this backend can run on this machine (CPU features, ...).
  virtual bool is_available() const = 0;

  /// Prepares one delegate from its preprocessed blob. The backend may keep
  /// `processed` (move from it) or let it be freed after init returns.
  virtual Result<DelegateHandle*> init(BackendInitContext& context, FreeableBuffer* processed,
                                       Span<const CompileSpec> compile_specs) const = 0;

  /// Runs one delegate. `args` are the DelegateCall's values: inputs, then outputs.
  virtual Status execute(BackendExecutionContext& context, DelegateHandle* handle,
                         Span<EValue*> args) const = 0;

  /// Releases what init() made. Called once per successful init.
  virtual void destroy(DelegateHandle* /*handle*/) const {}
};

}  // namespace torchlight
