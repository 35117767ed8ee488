#include "runtime/executor/program.h"

#include <cstdio>
#include <cstring>

#include "runtime/executor/method_loader.h"
#include "runtime/executor/plan_unions.h"
#include "runtime/executor/program_header.h"
#include "runtime/executor/unaligned_vector.h"
#include "schema/program_generated.h"

namespace torchlight {
namespace {

// Limits for the flatbuffer verifier: generous for real programs, small
// enough that a hostile file cannot make verification take minutes.
constexpr flatbuffers::uoffset_t kMaxVerifierDepth = 64;
constexpr flatbuffers::uoffset_t kMaxVerifierTables = 1u << 24;

unsigned long long ull(uint64_t v) { return static_cast<unsigned long long>(v); }

// Checks every DataSegment against the file and the header's segment area.
Status check_segments(const fb::Program* program, const ProgramHeader& header, uint64_t file_size,
                      const char* name) {
  const auto* segments = program->segments();
  if (segments == nullptr || segments->size() == 0) return Error::kOk;
  // Without a segment base only empty segments make sense (the reference
  // writer emits one for a program with no constants).
  const bool located = header.present && header.segment_base_offset != 0;
  // A 24-byte header does not say how much segment data there is; the file
  // end bounds it then.
  const uint64_t area = !located                      ? 0
                        : header.has_segment_data_size ? header.segment_data_size
                                                       : file_size - header.segment_base_offset;
  for (flatbuffers::uoffset_t i = 0; i < segments->size(); ++i) {
    const fb::DataSegment* segment = segments->Get(i);
    TL_CHECK_OR_RETURN(segment != nullptr, Error::kInvalidProgram, "'%s': segment %u is null",
                       name, i);
    uint64_t end = 0;
    TL_CHECK_OR_RETURN(segment->size() == 0 ||
                           (!__builtin_add_overflow(segment->offset(), segment->size(), &end) &&
                            end <= area),
                       Error::kInvalidProgram,
                       "'%s': segment %u (offset %llu, size %llu) runs past the %llu bytes of "
                       "segment data%s",
                       name, i, ull(segment->offset()), ull(segment->size()), ull(area),
                       located ? "" : " (the file has no extended header locating segments)");
  }
  return Error::kOk;
}

}  // namespace

Result<Program> Program::load(DataLoader* loader, Verification verification) {
  TL_CHECK_OR_RETURN(loader != nullptr, Error::kInvalidArgument, "Program::load needs a loader");
  const char* name = loader->name();
  TL_ASSIGN_OR_RETURN(const size_t file_size, loader->size());

  ProgramHeader header;
  {
    const size_t prefix_size = file_size < kProgramPrefixSize ? file_size : kProgramPrefixSize;
    TL_ASSIGN_OR_RETURN(FreeableBuffer prefix,
                        loader->load(0, prefix_size, {DataLoader::SegmentKind::kProgram}));
    TL_RETURN_IF_ERROR(parse_program_header(prefix.bytes(), file_size, name, &header));
  }

  const uint64_t program_size = header.present ? header.program_size : file_size;
  // The flatbuffer library addresses buffers with 32-bit offsets.
  TL_CHECK_OR_RETURN(program_size < FLATBUFFERS_MAX_BUFFER_SIZE, Error::kNotSupported,
                     "'%s': the flatbuffer part is %llu bytes; at most %llu are supported", name,
                     ull(program_size), ull(FLATBUFFERS_MAX_BUFFER_SIZE - 1));
  TL_ASSIGN_OR_RETURN(
      FreeableBuffer data,
      loader->load(0, static_cast<size_t>(program_size), {DataLoader::SegmentKind::kProgram}));
  TL_CHECK_OR_RETURN(data.size() == program_size, Error::kAccessFailed,
                     "'%s': loader returned %zu bytes of program data, expected %llu", name,
                     data.size(), ull(program_size));

  const auto* bytes = static_cast<const uint8_t*>(data.data());
  if (verification == Verification::kInternalConsistency) {
    flatbuffers::Verifier::Options options;
    options.max_depth = kMaxVerifierDepth;
    options.max_tables = kMaxVerifierTables;
    options.max_size = FLATBUFFERS_MAX_BUFFER_SIZE - 1;
    flatbuffers::Verifier verifier(bytes, data.size(), options);
    TL_CHECK_OR_RETURN(fb::VerifyProgramBuffer(verifier), Error::kInvalidProgram,
                       "'%s' is corrupt: its flatbuffer data (%llu bytes) failed verification", name,
                       ull(program_size));
  } else {
    // Even unverified, the root offset must land inside the data.
    uint32_t root = 0;
    std::memcpy(&root, bytes, sizeof(root));
    TL_CHECK_OR_RETURN(root >= 8 && root < program_size, Error::kInvalidProgram,
                       "'%s' is corrupt: root table offset %u is outside the %llu-byte program",
                       name, root, ull(program_size));
  }
  const fb::Program* program = fb::GetProgram(bytes);
  TL_CHECK_OR_RETURN(program->execution_plan() != nullptr, Error::kInvalidProgram,
                     "'%s' has no execution plans", name);
  TL_RETURN_IF_ERROR(check_segments(program, header, file_size, name));
  TL_RETURN_IF_ERROR(check_union_values(program, name));

  // Constants from the segment are loaded once and kept; legacy constants
  // live inside the flatbuffer and need nothing more.
  FreeableBuffer constants;
  const fb::SubsegmentOffsets* constant_segment = program->constant_segment();
  const bool legacy = program->constant_buffer() != nullptr && program->constant_buffer()->size() > 0;
  // Entry 0 of the offsets is reserved, so only a longer list names constants.
  if (!legacy && constant_segment != nullptr && constant_segment->offsets() != nullptr &&
      constant_segment->offsets()->size() > 1) {
    const uint32_t index = constant_segment->segment_index();
    const auto* segments = program->segments();
    TL_CHECK_OR_RETURN(segments != nullptr && index < segments->size(), Error::kInvalidProgram,
                       "'%s': constant_segment refers to segment %u, but the program has %u", name,
                       index, segments == nullptr ? 0u : segments->size());
    const fb::DataSegment* segment = segments->Get(index);
    TL_ASSIGN_OR_RETURN(
        constants, loader->load(static_cast<size_t>(header.segment_base_offset + segment->offset()),
                                static_cast<size_t>(segment->size()),
                                {DataLoader::SegmentKind::kConstant, index}));
  }
  return Program(loader, static_cast<FreeableBuffer&&>(data), program, header,
                 static_cast<FreeableBuffer&&>(constants));
}

size_t Program::num_methods() const { return program_->execution_plan()->size(); }

Result<std::string_view> Program::method_name(size_t index) const {
  TL_CHECK_OR_RETURN(index < num_methods(), Error::kInvalidArgument,
                     "'%s' has %zu methods; index %zu is out of range", loader_->name(),
                     num_methods(), index);
  const fb::ExecutionPlan* plan = program_->execution_plan()->Get(static_cast<uint32_t>(index));
  TL_CHECK_OR_RETURN(plan != nullptr && plan->name() != nullptr, Error::kInvalidProgram,
                     "'%s': method %zu has no name", loader_->name(), index);
  return std::string_view(plan->name()->c_str(), plan->name()->size());
}

Result<const fb::ExecutionPlan*> Program::find_plan(std::string_view name) const {
  char available[160] = "";
  size_t used = 0;
  for (size_t i = 0; i < num_methods(); ++i) {
    const fb::ExecutionPlan* plan = program_->execution_plan()->Get(static_cast<uint32_t>(i));
    if (plan == nullptr || plan->name() == nullptr) continue;
    const std::string_view plan_name(plan->name()->c_str(), plan->name()->size());
    if (plan_name == name) return plan;
    if (used < sizeof(available)) {
      int n = snprintf(available + used, sizeof(available) - used, "%s'%.*s'", used ? ", " : "",
                       static_cast<int>(plan_name.size()), plan_name.data());
      if (n > 0) used += static_cast<size_t>(n);
    }
  }
  return Status::error(Error::kNotFound, "'%s' has no method '%.*s' (it has: %s)",
                       loader_->name(), static_cast<int>(name.size()), name.data(),
                       used ? available : "none");
}

Result<MethodMeta> Program::method_meta(std::string_view name) const {
  TL_ASSIGN_OR_RETURN(const fb::ExecutionPlan* plan, find_plan(name));
  return MethodMeta(plan);
}

Result<Method> Program::load_method(std::string_view name, MemoryManager* memory_manager,
                                    const KernelRegistry& kernels,
                                    const BackendRegistry* backends,
                                    EventTracer* event_tracer) const {
  TL_ASSIGN_OR_RETURN(const fb::ExecutionPlan* plan, find_plan(name));
  return load_method_from_plan(*this, plan, memory_manager, kernels, backends, event_tracer);
}

uint32_t Program::version() const { return program_->version(); }

size_t Program::num_segments() const {
  return program_->segments() == nullptr ? 0 : program_->segments()->size();
}

Result<ProgramSegment> Program::segment(size_t index) const {
  TL_CHECK_OR_RETURN(index < num_segments(), Error::kInvalidArgument,
                     "'%s' has %zu segments; index %zu is out of range", loader_->name(),
                     num_segments(), index);
  const fb::DataSegment* s = program_->segments()->Get(static_cast<uint32_t>(index));
  return ProgramSegment{s->offset(), s->size()};
}

bool Program::uses_legacy_constant_buffer() const {
  return program_->constant_buffer() != nullptr && program_->constant_buffer()->size() > 0;
}

uint64_t Program::constant_bytes() const {
  if (!uses_legacy_constant_buffer()) return constant_segment_.size();
  uint64_t total = 0;
  for (const fb::Buffer* buffer : *program_->constant_buffer()) {
    if (buffer != nullptr && buffer->storage() != nullptr) total += buffer->storage()->size();
  }
  return total;
}

size_t Program::num_named_data() const {
  return program_->named_data() == nullptr ? 0 : program_->named_data()->size();
}

Result<const void*> Program::constant_data(uint32_t index, size_t nbytes) const {
  if (uses_legacy_constant_buffer()) {
    const auto* buffers = program_->constant_buffer();
    TL_CHECK_OR_RETURN(index < buffers->size(), Error::kInvalidProgram,
                       "constant buffer index %u is out of range (the program has %u)", index,
                       buffers->size());
    const fb::Buffer* buffer = buffers->Get(index);
    const size_t available =
        buffer == nullptr || buffer->storage() == nullptr ? 0 : buffer->storage()->size();
    TL_CHECK_OR_RETURN(nbytes <= available, Error::kInvalidProgram,
                       "constant buffer %u holds %zu bytes, but its tensor needs %zu", index,
                       available, nbytes);
    return nbytes == 0 && available == 0 ? static_cast<const void*>(nullptr)
                                         : buffer->storage()->data();
  }
  const fb::SubsegmentOffsets* constants = program_->constant_segment();
  const auto* offsets = constants == nullptr ? nullptr : constants->offsets();
  TL_CHECK_OR_RETURN(offsets != nullptr && index < offsets->size(), Error::kInvalidProgram,
                     "constant index %u is out of range (the constant segment lists %u)", index,
                     offsets == nullptr ? 0u : offsets->size());
  const uint64_t offset = unaligned_get(offsets, index);
  uint64_t end = 0;
  TL_CHECK_OR_RETURN(!__builtin_add_overflow(offset, static_cast<uint64_t>(nbytes), &end) &&
                         end <= constant_segment_.size(),
                     Error::kInvalidProgram,
                     "constant %u (offset %llu, %zu bytes) runs past the %zu-byte constant segment",
                     index, ull(offset), nbytes, constant_segment_.size());
  return static_cast<const uint8_t*>(constant_segment_.data()) + offset;
}

Result<FreeableBuffer> Program::load_segment(size_t index,
                                             const DataLoader::SegmentInfo& info) const {
  TL_ASSIGN_OR_RETURN(const ProgramSegment s, segment(index));
  // check_segments proved base + offset + size lies inside the file.
  return loader_->load(static_cast<size_t>(header_.segment_base_offset + s.offset),
                       static_cast<size_t>(s.size), info);
}

Status Program::load_mutable_data(size_t segments_index, uint64_t offset_index, void* dest,
                                  size_t nbytes) const {
  const auto* lists = program_->mutable_data_segments();
  TL_CHECK_OR_RETURN(lists != nullptr && segments_index < lists->size(), Error::kInvalidProgram,
                     "mutable data list %zu does not exist (the program has %u)", segments_index,
                     lists == nullptr ? 0u : lists->size());
  const fb::SubsegmentOffsets* list = lists->Get(static_cast<uint32_t>(segments_index));
  const auto* offsets = list == nullptr ? nullptr : list->offsets();
  TL_CHECK_OR_RETURN(offsets != nullptr && offset_index < offsets->size(), Error::kInvalidProgram,
                     "mutable data index %llu is out of range (list %zu has %u entries)",
                     ull(offset_index), segments_index, offsets == nullptr ? 0u : offsets->size());
  TL_ASSIGN_OR_RETURN(const ProgramSegment s, segment(list->segment_index()));
  const uint64_t offset = unaligned_get(offsets, static_cast<size_t>(offset_index));
  uint64_t end = 0;
  TL_CHECK_OR_RETURN(!__builtin_add_overflow(offset, static_cast<uint64_t>(nbytes), &end) &&
                         end <= s.size,
                     Error::kInvalidProgram,
                     "mutable data %llu (offset %llu, %zu bytes) runs past its %llu-byte segment",
                     ull(offset_index), ull(offset), nbytes, ull(s.size));
  if (nbytes == 0) return Error::kOk;
  TL_ASSIGN_OR_RETURN(
      FreeableBuffer bytes,
      loader_->load(static_cast<size_t>(header_.segment_base_offset + s.offset + offset), nbytes,
                    {DataLoader::SegmentKind::kMutable, list->segment_index()}));
  std::memcpy(dest, bytes.data(), nbytes);
  return Error::kOk;
}

Result<Span<const uint8_t>> Program::inline_delegate_data(size_t index) const {
  const auto* blobs = program_->backend_delegate_data();
  TL_CHECK_OR_RETURN(blobs != nullptr && index < blobs->size(), Error::kInvalidProgram,
                     "inline delegate data %zu does not exist (the program has %u)", index,
                     blobs == nullptr ? 0u : blobs->size());
  const fb::BackendDelegateInlineData* blob = blobs->Get(static_cast<uint32_t>(index));
  if (blob == nullptr || blob->data() == nullptr) return Span<const uint8_t>();
  return Span<const uint8_t>(blob->data()->data(), blob->data()->size());
}

Result<const fb::NamedData*> Program::named_data_entry(std::string_view key) const {
  const auto* entries = program_->named_data();
  if (entries != nullptr) {
    for (flatbuffers::uoffset_t i = 0; i < entries->size(); ++i) {
      const fb::NamedData* entry = entries->Get(i);
      if (entry == nullptr || entry->key() == nullptr) continue;
      if (std::string_view(entry->key()->c_str(), entry->key()->size()) == key) return entry;
    }
  }
  return Status::error(Error::kNotFound, "'%s' has no named data '%.*s'", loader_->name(),
                       static_cast<int>(key.size()), key.data());
}

Result<FreeableBuffer> Program::named_data(std::string_view key) const {
  TL_ASSIGN_OR_RETURN(const fb::NamedData* entry, named_data_entry(key));
  return load_segment(entry->segment_index(), {DataLoader::SegmentKind::kNamedData,
                                               entry->segment_index(), entry->key()->c_str()});
}

Status Program::load_named_data_into(std::string_view key, void* buffer, size_t size) const {
  TL_ASSIGN_OR_RETURN(const fb::NamedData* entry, named_data_entry(key));
  TL_ASSIGN_OR_RETURN(const ProgramSegment s, segment(entry->segment_index()));
  TL_CHECK_OR_RETURN(size <= s.size, Error::kInvalidArgument,
                     "named data '%.*s' holds %llu bytes; %zu were asked for",
                     static_cast<int>(key.size()), key.data(), ull(s.size), size);
  TL_CHECK_OR_RETURN(buffer != nullptr || size == 0, Error::kInvalidArgument,
                     "no buffer to load named data '%.*s' into", static_cast<int>(key.size()),
                     key.data());
  if (size == 0) return Error::kOk;
  TL_ASSIGN_OR_RETURN(FreeableBuffer bytes,
                      loader_->load(static_cast<size_t>(header_.segment_base_offset + s.offset),
                                    size, {DataLoader::SegmentKind::kNamedData, entry->segment_index(),
                                           entry->key()->c_str()}));
  std::memcpy(buffer, bytes.data(), size);
  return Error::kOk;
}

Result<const char*> Program::named_data_key(uint32_t index) const {
  const auto* entries = program_->named_data();
  const uint32_t count = entries == nullptr ? 0 : entries->size();
  TL_CHECK_OR_RETURN(index < count, Error::kInvalidArgument,
                     "'%s' has %u named data keys; index %u is out of range", loader_->name(),
                     count, index);
  const fb::NamedData* entry = entries->Get(index);
  TL_CHECK_OR_RETURN(entry != nullptr && entry->key() != nullptr, Error::kInvalidProgram,
                     "'%s' named data entry %u has no key", loader_->name(), index);
  return entry->key()->c_str();
}

}  // namespace torchlight
