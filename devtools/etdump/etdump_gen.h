// EtdumpGen: an EventTracer that records a method's load and runs in
// upstream ExecuTorch's ETDump layout and writes them as a .etdp file
// (size-prefixed flatbuffer "ED00"), which upstream's Inspector reads.
//
// Nothing is allocated after construction: records go into caller-given
// storage, delegate ids and tensor shapes into caller-given side data,
// tensor bytes into an optional caller-given debug buffer, and serialize()
// writes into a caller-given output buffer. When storage runs out the
// generator stops recording and counts what it dropped.
#pragma once

#include <cstddef>
#include <cstdint>

#include "devtools/etdump/etdump_record.h"
#include "runtime/core/event_tracer.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace torchlight {
namespace etdump {

class EtdumpGen final : public EventTracer {
 public:
  /// `records` receives one entry per event (a kernel call is one, written
  /// as two events); `side_data` the variable-length parts (delegate ids and
  /// metadata, allocator names, tensor sizes and strides). Both must outlive
  /// the generator.
  EtdumpGen(Span<EtdumpRecord> records, Span<uint8_t> side_data);
  /// No storage yet: every event is dropped until set_storage().
  EtdumpGen() = default;
  /// Replaces the storage (as the constructor) and forgets every record, so
  /// a caller can attach the generator first and size storage once it knows
  /// the program.
  void set_storage(Span<EtdumpRecord> records, Span<uint8_t> side_data);

  /// Tensor bytes of logged values go here, each at a 64-byte aligned
  /// offset. Setting a non-empty buffer turns on logging of intermediate
  /// values and program outputs; `buffer` must outlive the generator.
  void set_debug_buffer(Span<uint8_t> buffer);
  void set_log_intermediate_outputs(bool on) { log_intermediates_ = on; }
  void set_log_program_outputs(bool on) { log_outputs_ = on; }

  /// Registers an allocator in the open block (before its first event, as
  /// upstream requires) and returns its 1-based id; 0 when storage is full.
  int32_t track_allocator(const char* name);
  /// An allocation of `size` bytes from allocator `id`.
  void track_allocation(int32_t id, uint64_t size);

  /// Forgets every record and logged tensor; buffers are kept.
  void reset();

  size_t records_used() const { return used_; }
  /// The records so far, in order (a kernel call is one record).
  Span<const EtdumpRecord> records() const { return {records_.data(), used_}; }
  /// Events not recorded because `records` or `side_data` was full.
  size_t events_dropped() const { return events_dropped_; }
  /// Values not logged because the debug buffer was full.
  size_t debug_values_dropped() const { return debug_dropped_; }
  /// Debug buffer bytes the logged values need, including those dropped.
  size_t debug_bytes_needed() const { return debug_needed_; }
  /// The written part of the debug buffer.
  Span<const uint8_t> debug_data() const { return {debug_.data(), debug_used_}; }

  /// An upper bound on serialize()'s output for the current records.
  size_t serialized_size_bound() const;
  /// Writes the trace into `out` as a size-prefixed ETDump flatbuffer and
  /// returns the written part (at the start of `out`). Errors:
  /// kMemoryAllocationFailed when `out` is smaller than
  /// serialized_size_bound() (the message gives both sizes).
  Result<Span<const uint8_t>> serialize(Span<uint8_t> out);

  // EventTracer.
  EventTracerEntry begin_method(const char* name, bool is_load) override;
  void end_method(EventTracerEntry entry) override;
  EventTracerEntry begin_instruction(size_t chain, size_t index, const char* name,
                                     InstructionKind kind) override;
  void end_instruction(EventTracerEntry entry) override;
  void log_value(size_t value_index, const EValue& value) override;
  void log_output(size_t index, const EValue& value) override;
  EventTracerEntry start_profiling_delegate(const char* name, int32_t id) override;
  void end_profiling_delegate(EventTracerEntry entry, const void* metadata,
                              size_t metadata_size) override;
  void log_profiling_delegate(const char* name, int32_t id, uint64_t start_ns, uint64_t end_ns,
                              const void* metadata, size_t metadata_size) override;

 private:
  EtdumpRecord* add_record(RecordKind kind);
  const char* copy_string(const char* text);
  void* copy_bytes(const void* data, size_t size, size_t align);
  void add_profile(const char* name, uint64_t start, uint64_t end, bool native_call);
  void add_delegate(const char* name, int32_t id, uint64_t start, uint64_t end,
                    const void* metadata, size_t metadata_size);
  void log_evalue(const EValue& value, bool is_output);
  bool log_tensor(EtdumpRecord* record, const Tensor& tensor);

  Span<EtdumpRecord> records_;
  Span<uint8_t> side_;
  Span<uint8_t> debug_;
  size_t used_ = 0;
  size_t side_used_ = 0;
  size_t debug_used_ = 0;
  size_t debug_needed_ = 0;
  size_t events_dropped_ = 0;
  size_t debug_dropped_ = 0;
  int32_t allocators_in_block_ = 0;
  bool log_intermediates_ = false;
  bool log_outputs_ = false;
  // The instruction running now, stamped on every event (upstream's
  // current chain and debug handle); (-1, 0) outside instructions.
  int32_t chain_ = -1;
  int32_t instruction_ = 0;
  const char* instruction_name_ = nullptr;
  InstructionKind instruction_kind_ = InstructionKind::kKernel;
};

}  // namespace etdump
}  // namespace torchlight
