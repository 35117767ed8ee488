// EtdumpGen::serialize: the recorded trace as an ETDump flatbuffer, built
// with flatbuffers' builder over the caller's output buffer.
#include <cstdio>
#include <cstring>

#include "devtools/etdump/etdump_gen.h"
#include "devtools/etdump/etdump_generated.h"
#include "runtime/core/status.h"
#include "runtime/platform/platform.h"

namespace torchlight {
namespace etdump {

namespace {

namespace fb = ::etdump;

// Hands the builder the caller's buffer once. The size check in serialize()
// guarantees the builder never asks for more; if it did, that is a bug in
// serialized_size_bound(), not bad input.
class FixedAllocator final : public flatbuffers::Allocator {
 public:
  explicit FixedAllocator(Span<uint8_t> buffer) : buffer_(buffer) {}
  uint8_t* allocate(size_t size) override {
    if (given_ || size > buffer_.size()) tl_platform_abort();
    given_ = true;
    return buffer_.data();
  }
  void deallocate(uint8_t*, size_t) override {}

 private:
  Span<uint8_t> buffer_;
  bool given_ = false;
};

// Worst cases per object: table plus vtable plus alignment padding, with
// room to spare; strings and vectors add their payload.
constexpr size_t kFixedOverhead = 256;
constexpr size_t kPerBlock = 160;
constexpr size_t kPerEvent = 192;
constexpr size_t kPerDebugEvent = 448;
constexpr size_t kPerString = 16;
constexpr size_t kNativeCallPrefix = sizeof("native_call_");

size_t string_cost(const char* s) { return s == nullptr ? 0 : std::strlen(s) + kPerString; }

// "aten::add.out" -> "native_call_add.out", as upstream's codegen names the
// kernel wrapper's event (operator name without its namespace).
size_t native_call_name(const char* op, char* out, size_t capacity) {
  const char* colon = std::strstr(op, "::");
  const char* base = colon != nullptr ? colon + 2 : op;
  const int n = std::snprintf(out, capacity, "native_call_%s", base);
  return n < 0 ? 0 : (static_cast<size_t>(n) < capacity ? static_cast<size_t>(n) : capacity - 1);
}

}  // namespace

size_t EtdumpGen::serialized_size_bound() const {
  size_t total = kFixedOverhead;
  for (size_t i = 0; i < used_; ++i) {
    const EtdumpRecord& r = records_[i];
    switch (r.kind) {
      case RecordKind::kBlock:
        total += kPerBlock + string_cost(r.name);
        break;
      case RecordKind::kAllocator:
      case RecordKind::kAllocation:
        total += kPerEvent + string_cost(r.name);
        break;
      case RecordKind::kProfile:
        total += kPerEvent + string_cost(r.delegate_id_str) + r.metadata_size + kPerString;
        if (r.native_call) {
          total += kPerEvent + 2 * string_cost(r.name) + kNativeCallPrefix + 24;
        } else {
          total += string_cost(r.name);
        }
        break;
      case RecordKind::kDebug:
        total += kPerDebugEvent + 2 * r.dim * sizeof(int64_t) + string_cost(r.delegate_id_str);
        break;
    }
  }
  return total;
}

namespace {

using Builder = flatbuffers::FlatBufferBuilder;

flatbuffers::Offset<fb::Event> write_profile(Builder& b, const EtdumpRecord& r, const char* name,
                                             size_t name_size) {
  flatbuffers::Offset<flatbuffers::String> name_off;
  if (name != nullptr) name_off = b.CreateString(name, name_size);
  flatbuffers::Offset<flatbuffers::String> delegate_str;
  if (r.delegate_id_str != nullptr) delegate_str = b.CreateString(r.delegate_id_str);
  flatbuffers::Offset<flatbuffers::Vector<uint8_t>> metadata;
  // Upstream writes the metadata vector for every delegate event, even empty.
  const bool is_delegate = r.delegate_id_str != nullptr || r.delegate_id_int != -1;
  if (is_delegate) metadata = b.CreateVector(r.metadata, r.metadata_size);
  auto event = fb::CreateProfileEvent(b, name_off, r.chain_index, r.instruction_id,
                                      r.delegate_id_int, delegate_str, metadata,
                                      r.span.start_time, r.span.end_time);
  return fb::CreateEvent(b, event);
}

flatbuffers::Offset<fb::Event> write_debug(Builder& b, const EtdumpRecord& r) {
  flatbuffers::Offset<fb::Tensor> tensor;
  flatbuffers::Offset<fb::Int> int_value;
  flatbuffers::Offset<fb::Double> double_value;
  flatbuffers::Offset<fb::Bool> bool_value;
  fb::ValueType type = fb::ValueType::Null;
  switch (r.value_type) {
    case DebugValueType::kTensor: {
      auto sizes = b.CreateVector(r.sizes, r.dim);
      auto strides = b.CreateVector(r.strides, r.dim);
      tensor = fb::CreateTensor(b, static_cast<fb::ScalarType>(r.scalar_type), sizes, strides,
                                r.tensor_offset);
      type = fb::ValueType::Tensor;
      break;
    }
    case DebugValueType::kInt:
      int_value = fb::CreateInt(b, r.int_value);
      type = fb::ValueType::Int;
      break;
    case DebugValueType::kDouble:
      double_value = fb::CreateDouble(b, r.double_value);
      type = fb::ValueType::Double;
      break;
    case DebugValueType::kBool:
      bool_value = fb::CreateBool(b, r.bool_value);
      type = fb::ValueType::Bool;
      break;
    case DebugValueType::kNull:
      break;
  }
  flatbuffers::Offset<fb::Bool> output;
  if (r.is_output) output = fb::CreateBool(b, true);
  auto value = fb::CreateValue(b, type, tensor, 0, int_value, 0, double_value, bool_value, output);
  flatbuffers::Offset<flatbuffers::String> delegate_str;
  if (r.delegate_id_str != nullptr) delegate_str = b.CreateString(r.delegate_id_str);
  // chain -1 becomes 2^64-1 in this unsigned field, as upstream writes it.
  auto event = fb::CreateDebugEvent(b, static_cast<uint64_t>(static_cast<int64_t>(r.chain_index)),
                                    r.instruction_id, value, r.delegate_id_int, delegate_str);
  return fb::CreateEvent(b, 0, 0, event);
}

// Writes records [begin, end) as one RunData and returns its offset.
uint32_t write_block(Builder& b, Span<EtdumpRecord> records_, size_t begin, size_t end) {
  const bool named = records_[begin].kind == RecordKind::kBlock;
  const size_t first = named ? begin + 1 : begin;
  size_t num_events = 0;
  size_t num_allocators = 0;
  char name_buffer[512];
  for (size_t k = first; k < end; ++k) {
    EtdumpRecord& r = records_[k];
    switch (r.kind) {
      case RecordKind::kAllocator:
        r.serialized = fb::CreateAllocator(b, b.CreateString(r.name)).o;
        ++num_allocators;
        break;
      case RecordKind::kAllocation:
        r.serialized =
            fb::CreateEvent(b, 0, fb::CreateAllocationEvent(b, r.allocation.allocator_id,
                                                            r.allocation.allocation_size))
                .o;
        ++num_events;
        break;
      case RecordKind::kProfile:
        if (r.native_call) {
          // A kernel call is two events with one span: native_call_<op>,
          // then OPERATOR_CALL.
          const size_t n = native_call_name(r.name, name_buffer, sizeof(name_buffer));
          r.serialized = write_profile(b, r, name_buffer, n).o;
          r.serialized_twin = write_profile(b, r, "OPERATOR_CALL", 13).o;
          num_events += 2;
        } else {
          r.serialized = write_profile(b, r, r.name, r.name ? std::strlen(r.name) : 0).o;
          ++num_events;
        }
        break;
      case RecordKind::kDebug:
        r.serialized = write_debug(b, r).o;
        ++num_events;
        break;
      case RecordKind::kBlock:
        break;
    }
  }
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Allocator>>> allocators;
  if (num_allocators > 0) {
    b.StartVector<flatbuffers::Offset<fb::Allocator>>(num_allocators);
    for (size_t k = end; k-- > first;) {
      if (records_[k].kind == RecordKind::kAllocator) {
        b.PushElement(flatbuffers::Offset<fb::Allocator>(records_[k].serialized));
      }
    }
    allocators = b.EndVector(num_allocators);
  }
  b.StartVector<flatbuffers::Offset<fb::Event>>(num_events);
  for (size_t k = end; k-- > first;) {
    const EtdumpRecord& r = records_[k];
    if (r.kind == RecordKind::kAllocator) continue;
    if (r.kind == RecordKind::kProfile && r.native_call) {
      b.PushElement(flatbuffers::Offset<fb::Event>(r.serialized_twin));
    }
    b.PushElement(flatbuffers::Offset<fb::Event>(r.serialized));
  }
  auto events = b.EndVector(num_events);
  flatbuffers::Offset<flatbuffers::String> name;
  if (named) name = b.CreateString(records_[begin].name);
  return fb::CreateRunData(b, name, -1, allocators, events).o;
}

}  // namespace

Result<Span<const uint8_t>> EtdumpGen::serialize(Span<uint8_t> out) {
  const size_t bound = serialized_size_bound();
  if (out.size() < bound) {
    return Status::error(Error::kMemoryAllocationFailed,
                         "etdump: the output buffer has %zu bytes; %zu recorded events may need "
                         "up to %zu",
                         out.size(), used_, bound);
  }
  // Round down so the builder's first (aligned) request is the whole buffer.
  const size_t capacity = out.size() / 8 * 8;
  FixedAllocator allocator(out.subspan(0, capacity));
  Builder b(capacity, &allocator, false, 8);

  // A block runs from a kBlock record to the next; records before the first
  // block (none come from a Method) form an unnamed one. Its RunData offset
  // is kept in its first record.
  size_t num_blocks = 0;
  for (size_t i = 0; i < used_;) {
    size_t end = i + 1;
    while (end < used_ && records_[end].kind != RecordKind::kBlock) ++end;
    records_[i].serialized = write_block(b, records_, i, end);
    ++num_blocks;
    i = end;
  }
  b.StartVector<flatbuffers::Offset<fb::RunData>>(num_blocks);
  for (size_t k = used_; k > 0;) {  // Back to front: the builder writes downward.
    size_t start = k - 1;
    while (start > 0 && records_[start].kind != RecordKind::kBlock) --start;
    b.PushElement(flatbuffers::Offset<fb::RunData>(records_[start].serialized));
    k = start;
  }
  auto run_data = b.EndVector(num_blocks);
  fb::FinishSizePrefixedETDumpBuffer(b, fb::CreateETDump(b, 0, run_data));
  const size_t size = b.GetSize();
  std::memmove(out.data(), b.GetBufferPointer(), size);
  return Span<const uint8_t>(out.data(), size);
}

}  // namespace etdump
}  // namespace torchlight
