// Program: a loaded, verified `.pte` file.
//
// Program::load reads the header and the flatbuffer, verifies both, and
// checks every segment against the real file length. Methods are loaded from
// it with load_method(). The Program must outlive its Methods and MethodMetas.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/core/data_loader.h"
#include "runtime/core/freeable_buffer.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"
#include "runtime/executor/method.h"
#include "runtime/executor/method_meta.h"

namespace torchlight {

namespace fb {
struct ExecutionPlan;
struct NamedData;
struct Program;
}  // namespace fb

class BackendRegistry;
class EventTracer;
class KernelRegistry;

/// The extended header (`eh00`) of a .pte, when the file has one.
struct ProgramHeader {
  bool present = false;
  uint32_t length = 0;
  uint64_t program_size = 0;         // Bytes of flatbuffer data from offset 0.
  uint64_t segment_base_offset = 0;  // File offset of segment 0's base.
  // Release 0.5 and older write a 24-byte header without this field; then
  // segments are bounded by the file instead.
  bool has_segment_data_size = false;
  uint64_t segment_data_size = 0;
};

struct ProgramSegment {
  uint64_t offset = 0;  // From ProgramHeader::segment_base_offset.
  uint64_t size = 0;
};

class Program {
 public:
  enum class Verification {
    kMinimal,              // Header and segment bounds only.
    kInternalConsistency,  // Also run the flatbuffer verifier (default).
  };

  /// Loads a program. `loader` must outlive the Program.
  /// Errors: kInvalidProgram for anything wrong with the file (too short,
  /// wrong identifier, bad header, failed verification, out-of-range
  /// segments), kNotSupported for another format version, kAccessFailed and
  /// kMemoryAllocationFailed from the loader. Messages name the file.
  static Result<Program> load(DataLoader* loader,
                              Verification verification = Verification::kInternalConsistency);

  Program(Program&&) noexcept = default;
  Program& operator=(Program&&) noexcept = default;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  size_t num_methods() const;
  /// Name of method `index`. Errors: kInvalidArgument when out of range.
  Result<std::string_view> method_name(size_t index) const;
  /// Errors: kNotFound when no method has that name (the message lists them).
  Result<MethodMeta> method_meta(std::string_view name) const;

  /// Loads method `name`. `memory_manager`, `kernels`, `backends` (may be
  /// null when the method has no delegates) and `event_tracer` (may be null)
  /// must outlive the Method. Errors: kNotFound (no such method),
  /// kInvalidProgram (inconsistent plan), kOperatorMissing (lists every
  /// operator without a kernel), kBackendMissing, kMemoryAllocationFailed.
  Result<Method> load_method(std::string_view name, MemoryManager* memory_manager,
                             const KernelRegistry& kernels,
                             const BackendRegistry* backends = nullptr,
                             EventTracer* event_tracer = nullptr) const;

  // --- For inspection tools ------------------------------------------------
  const ProgramHeader& header() const { return header_; }
  uint32_t version() const;
  size_t num_segments() const;
  /// Offset (from the segment base) and size of segment `index`.
  /// Errors: kInvalidArgument when out of range.
  Result<ProgramSegment> segment(size_t index) const;
  /// Bytes of constant tensor data (constant segment or legacy buffers).
  uint64_t constant_bytes() const;
  /// Whether constants come from the legacy inline `constant_buffer`.
  bool uses_legacy_constant_buffer() const;
  size_t num_named_data() const;
  const char* loader_name() const { return loader_->name(); }

  // --- For Method loading (internal) ----------------------------------------
  /// Constant tensor data for data_buffer_idx `index`, at least `nbytes` long.
  /// Errors: kInvalidProgram when the index or the size is out of range.
  Result<const void*> constant_data(uint32_t index, size_t nbytes) const;
  /// Copies `nbytes` of the initial value of a mutable tensor into `dest`.
  Status load_mutable_data(size_t segments_index, uint64_t offset_index, void* dest,
                           size_t nbytes) const;
  /// Loads segment `index` through the loader (for delegate blobs).
  Result<FreeableBuffer> load_segment(size_t index, const DataLoader::SegmentInfo& info) const;
  /// The delegate blob kept inline in the flatbuffer.
  Result<Span<const uint8_t>> inline_delegate_data(size_t index) const;
  /// Loads the named-data entry `key` (a segment).
  Result<FreeableBuffer> named_data(std::string_view key) const;
  /// Whether named-data entry `key` exists. Errors: kNotFound.
  Status find_named_data(std::string_view key) const { return named_data_entry(key).status(); }
  /// Copies the first `size` bytes of named-data entry `key` into `buffer`.
  /// Errors: kNotFound, kInvalidArgument (`size` passes the entry's end, or
  /// no buffer), the loader's errors.
  Status load_named_data_into(std::string_view key, void* buffer, size_t size) const;
  /// The key of named-data entry `index`. Errors: kInvalidArgument (out of
  /// range), kInvalidProgram (an entry without a key).
  Result<const char*> named_data_key(uint32_t index) const;
  const fb::Program* flatbuffer() const { return program_; }

 private:
  Result<const fb::ExecutionPlan*> find_plan(std::string_view name) const;
  Result<const fb::NamedData*> named_data_entry(std::string_view key) const;

  Program(DataLoader* loader, FreeableBuffer program_data, const fb::Program* program,
          ProgramHeader header, FreeableBuffer constant_segment)
      : loader_(loader),
        program_data_(static_cast<FreeableBuffer&&>(program_data)),
        program_(program),
        header_(header),
        constant_segment_(static_cast<FreeableBuffer&&>(constant_segment)) {}

  DataLoader* loader_;
  FreeableBuffer program_data_;  // The flatbuffer; program_ points into it.
  const fb::Program* program_;
  ProgramHeader header_;
  FreeableBuffer constant_segment_;  // Loaded at Program::load, kept.
};

}  // namespace torchlight
