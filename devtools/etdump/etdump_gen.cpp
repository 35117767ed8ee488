#include "devtools/etdump/etdump_gen.h"

#include <cstring>

#include "runtime/platform/platform.h"

namespace torchlight {
namespace etdump {

namespace {

constexpr size_t kDebugAlignment = 64;  // As upstream's BufferDataSink.

const char* instruction_event_name(InstructionKind kind) {
  switch (kind) {
    case InstructionKind::kKernel: return "OPERATOR_CALL";
    case InstructionKind::kDelegate: return "DELEGATE_CALL";
    case InstructionKind::kMove: return "MOVE_CALL";
    case InstructionKind::kJumpFalse: return "JF_CALL";
    case InstructionKind::kFree: return "FREE_CALL";
  }
  return "OPERATOR_CALL";
}

// The dtypes upstream's log_evalue writes; others it refuses, so a reader
// may not know their element size.
bool loggable(ScalarType type) {
  switch (type) {
    case ScalarType::kByte:
    case ScalarType::kChar:
    case ScalarType::kShort:
    case ScalarType::kInt:
    case ScalarType::kLong:
    case ScalarType::kFloat:
    case ScalarType::kDouble:
    case ScalarType::kBool:
    case ScalarType::kBits16:
    case ScalarType::kUInt16:
      return true;
    default:
      return false;
  }
}

size_t align_up(size_t n, size_t align) { return (n + align - 1) / align * align; }

}  // namespace

EtdumpGen::EtdumpGen(Span<EtdumpRecord> records, Span<uint8_t> side_data)
    : records_(records), side_(side_data) {}

void EtdumpGen::set_storage(Span<EtdumpRecord> records, Span<uint8_t> side_data) {
  records_ = records;
  side_ = side_data;
  reset();
}

void EtdumpGen::set_debug_buffer(Span<uint8_t> buffer) {
  debug_ = buffer;
  debug_used_ = 0;
  log_intermediates_ = buffer.size() > 0;
  log_outputs_ = buffer.size() > 0;
}

void EtdumpGen::reset() {
  used_ = side_used_ = debug_used_ = debug_needed_ = 0;
  events_dropped_ = debug_dropped_ = 0;
  allocators_in_block_ = 0;
  chain_ = -1;
  instruction_ = 0;
}

EtdumpRecord* EtdumpGen::add_record(RecordKind kind) {
  if (used_ == records_.size()) {
    ++events_dropped_;
    return nullptr;
  }
  EtdumpRecord* record = &records_[used_++];
  *record = EtdumpRecord();
  record->kind = kind;
  record->chain_index = chain_;
  record->instruction_id = instruction_;
  return record;
}

void* EtdumpGen::copy_bytes(const void* data, size_t size, size_t align) {
  const size_t start = align_up(side_used_, align);
  if (start > side_.size() || side_.size() - start < size) return nullptr;
  side_used_ = start + size;
  if (size > 0) std::memcpy(side_.data() + start, data, size);
  return side_.data() + start;
}

const char* EtdumpGen::copy_string(const char* text) {
  return static_cast<const char*>(copy_bytes(text, std::strlen(text) + 1, 1));
}

int32_t EtdumpGen::track_allocator(const char* name) {
  const char* copy = copy_string(name != nullptr ? name : "");
  EtdumpRecord* record = copy != nullptr ? add_record(RecordKind::kAllocator) : nullptr;
  if (record == nullptr) {
    if (copy == nullptr) ++events_dropped_;
    return 0;
  }
  record->name = copy;
  return ++allocators_in_block_;
}

void EtdumpGen::track_allocation(int32_t id, uint64_t size) {
  EtdumpRecord* record = add_record(RecordKind::kAllocation);
  if (record == nullptr) return;
  record->allocation.allocator_id = id;
  record->allocation.allocation_size = size;
}

EventTracerEntry EtdumpGen::begin_method(const char* /*name*/, bool is_load) {
  EtdumpRecord* block = add_record(RecordKind::kBlock);
  if (block != nullptr) block->name = is_load ? "Default" : "Execute";
  allocators_in_block_ = 0;
  chain_ = -1;
  instruction_ = 0;
  return {is_load ? 1u : 0u, tl_platform_monotonic_ns()};
}

void EtdumpGen::end_method(EventTracerEntry entry) {
  const uint64_t end = tl_platform_monotonic_ns();
  chain_ = -1;
  instruction_ = 0;
  if (entry.id == 1) {
    // One span covers both: the loader has no separate init phase to time.
    add_profile("Method::init", entry.start_ns, end, false);
    add_profile("Program::load_method", entry.start_ns, end, false);
  } else {
    add_profile("Method::execute", entry.start_ns, end, false);
  }
}

void EtdumpGen::add_profile(const char* name, uint64_t start, uint64_t end, bool native_call) {
  EtdumpRecord* record = add_record(RecordKind::kProfile);
  if (record == nullptr) return;
  record->name = name;
  record->native_call = native_call;
  record->span.start_time = start;
  record->span.end_time = end;
}

EventTracerEntry EtdumpGen::begin_instruction(size_t chain, size_t index, const char* name,
                                              InstructionKind kind) {
  chain_ = static_cast<int32_t>(chain);
  instruction_ = static_cast<int32_t>(index);
  instruction_name_ = name;
  instruction_kind_ = kind;
  return {0, tl_platform_monotonic_ns()};
}

void EtdumpGen::end_instruction(EventTracerEntry entry) {
  const uint64_t end = tl_platform_monotonic_ns();
  const size_t before = used_;
  if (instruction_kind_ == InstructionKind::kKernel) {
    // The record's name is the operator; serialize() writes its
    // native_call_ event and then OPERATOR_CALL.
    add_profile(instruction_name_, entry.start_ns, end, true);
  } else {
    add_profile(instruction_event_name(instruction_kind_), entry.start_ns, end, false);
  }
  if (used_ > before) records_[used_ - 1].instruction_name = instruction_name_;
  // Values logged right after the instruction keep its ids, as upstream
  // logs them inside the instruction's scope; log_output resets them.
}

void EtdumpGen::log_value(size_t /*value_index*/, const EValue& value) {
  if (log_intermediates_) log_evalue(value, false);
}

void EtdumpGen::log_output(size_t /*index*/, const EValue& value) {
  chain_ = -1;
  instruction_ = 0;
  if (log_outputs_) log_evalue(value, true);
}

void EtdumpGen::log_evalue(const EValue& value, bool is_output) {
  if (value.is_tensor_list()) {
    // Upstream writes a TensorList value; each tensor here gets its own
    // event, which the Inspector reads the same way per tensor.
    for (const Tensor& t : value.to_tensor_list()) log_evalue(EValue(t), is_output);
    return;
  }
  if (!value.is_tensor() && !value.is_int() && !value.is_double() && !value.is_bool()) return;
  if (value.is_tensor() && (!value.to_tensor().defined() ||
                            !loggable(value.to_tensor().scalar_type()))) {
    return;
  }
  const size_t side_mark = side_used_;
  EtdumpRecord* record = add_record(RecordKind::kDebug);
  if (record == nullptr) return;
  record->is_output = is_output;
  if (value.is_int()) {
    record->value_type = DebugValueType::kInt;
    record->int_value = value.to_int();
  } else if (value.is_double()) {
    record->value_type = DebugValueType::kDouble;
    record->double_value = value.to_double();
  } else if (value.is_bool()) {
    record->value_type = DebugValueType::kBool;
    record->bool_value = value.to_bool();
  } else if (!log_tensor(record, value.to_tensor())) {
    --used_;  // Undo: the event is counted as dropped.
    side_used_ = side_mark;
  }
}

bool EtdumpGen::log_tensor(EtdumpRecord* record, const Tensor& tensor) {
  record->value_type = DebugValueType::kTensor;
  record->scalar_type = static_cast<int8_t>(tensor.scalar_type());
  const size_t dim = tensor.dim();
  int64_t shape[2 * 16] = {};
  if (dim > 16) {
    ++events_dropped_;
    return false;
  }
  for (size_t d = 0; d < dim; ++d) {
    shape[d] = tensor.sizes()[d];
    shape[dim + d] = tensor.strides()[d];
  }
  const auto* copied = static_cast<const int64_t*>(
      copy_bytes(shape, 2 * dim * sizeof(int64_t), alignof(int64_t)));
  if (copied == nullptr && dim > 0) {
    ++events_dropped_;
    return false;
  }
  record->dim = static_cast<uint32_t>(dim);
  record->sizes = copied;
  record->strides = copied + dim;
  const size_t nbytes = tensor.nbytes();
  if (nbytes == 0) {
    record->tensor_offset = -1;  // As upstream for an empty tensor.
    return true;
  }
  const size_t offset = align_up(debug_needed_, kDebugAlignment);
  debug_needed_ = offset + nbytes;
  if (debug_dropped_ > 0 || offset > debug_.size() || debug_.size() - offset < nbytes ||
      tensor.const_data_ptr() == nullptr) {
    // Later values would fit where this one did not, but a trace with a
    // hole in the middle misleads; stop logging tensors instead.
    ++debug_dropped_;
    return false;
  }
  std::memset(debug_.data() + debug_used_, 0, offset - debug_used_);
  std::memcpy(debug_.data() + offset, tensor.const_data_ptr(), nbytes);
  debug_used_ = offset + nbytes;
  record->tensor_offset = static_cast<int64_t>(offset);
  return true;
}

EventTracerEntry EtdumpGen::start_profiling_delegate(const char* name, int32_t id) {
  const uint64_t start = tl_platform_monotonic_ns();
  const size_t before = used_;
  add_delegate(name, id, start, start, nullptr, 0);
  // entry.id is the record's index plus one; 0 when it was dropped.
  return {used_ > before ? used_ : 0, start};
}

void EtdumpGen::end_profiling_delegate(EventTracerEntry entry, const void* metadata,
                                       size_t metadata_size) {
  const uint64_t end = tl_platform_monotonic_ns();
  if (entry.id == 0 || entry.id > used_) return;
  EtdumpRecord& record = records_[entry.id - 1];
  if (record.kind != RecordKind::kProfile) return;
  record.span.end_time = end;
  if (metadata_size > 0) {
    const void* copy = copy_bytes(metadata, metadata_size, 1);
    if (copy == nullptr) {
      ++events_dropped_;  // The event stays, without its metadata.
      return;
    }
    record.metadata = static_cast<const uint8_t*>(copy);
    record.metadata_size = static_cast<uint32_t>(metadata_size);
  }
}

void EtdumpGen::log_profiling_delegate(const char* name, int32_t id, uint64_t start_ns,
                                       uint64_t end_ns, const void* metadata,
                                       size_t metadata_size) {
  add_delegate(name, id, start_ns, end_ns, metadata, metadata_size);
}

void EtdumpGen::add_delegate(const char* name, int32_t id, uint64_t start, uint64_t end,
                             const void* metadata, size_t metadata_size) {
  const size_t side_mark = side_used_;
  const char* name_copy = nullptr;
  const void* metadata_copy = nullptr;
  if (name != nullptr) {
    name_copy = copy_string(name);
    if (name_copy == nullptr) {
      ++events_dropped_;
      return;
    }
  }
  if (metadata_size > 0) {
    metadata_copy = copy_bytes(metadata, metadata_size, 1);
    if (metadata_copy == nullptr) {
      side_used_ = side_mark;
      ++events_dropped_;
      return;
    }
  }
  EtdumpRecord* record = add_record(RecordKind::kProfile);
  if (record == nullptr) {
    side_used_ = side_mark;
    return;
  }
  record->delegate_id_str = name_copy;
  record->delegate_id_int = name != nullptr ? -1 : id;
  record->metadata = static_cast<const uint8_t*>(metadata_copy);
  record->metadata_size = static_cast<uint32_t>(metadata_size);
  record->span.start_time = start;
  record->span.end_time = end;
}

}  // namespace etdump
}  // namespace torchlight
