// EtdumpRecord: one recorded trace entry, kept in caller-provided storage
// until EtdumpGen serializes the trace. Plain data, so an array of them can
// be given up front and nothing is allocated while a method runs.
#pragma once

#include <cstdint>

namespace torchlight {
namespace etdump {

enum class RecordKind : uint8_t {
  kBlock,       // Opens a RunData; `name` is the block name.
  kAllocator,   // Registers an allocator in the open block; `name`.
  kProfile,     // A ProfileEvent.
  kAllocation,  // An AllocationEvent: allocator_id, allocation_size.
  kDebug,       // A DebugEvent carrying one Value.
};

/// The etdump.ValueType byte of a debug record's value.
enum class DebugValueType : uint8_t { kNull = 0, kInt = 1, kBool = 2, kDouble = 4, kTensor = 5 };

struct EtdumpRecord {
  RecordKind kind = RecordKind::kProfile;
  DebugValueType value_type = DebugValueType::kNull;
  // kProfile for an operator call: also write "native_call_<op>" with the
  // same span, ahead of it (upstream's codegen wraps each kernel so).
  bool native_call = false;
  bool is_output = false;  // kDebug: a program output.
  int8_t scalar_type = 0;  // kDebug tensor: the ScalarType byte.
  int32_t chain_index = -1;
  int32_t instruction_id = 0;
  int32_t delegate_id_int = -1;
  uint32_t metadata_size = 0;
  uint32_t dim = 0;  // kDebug tensor: entries in sizes and strides.
  // Static strings (block, event and operator names) or copies in the
  // generator's side data (delegate ids, allocator names).
  const char* name = nullptr;
  const char* delegate_id_str = nullptr;
  // kProfile of an instruction: its operator or backend name (not written;
  // for summaries such as `torchlight profile`).
  const char* instruction_name = nullptr;
  const uint8_t* metadata = nullptr;  // In side data.
  const int64_t* sizes = nullptr;     // kDebug tensor, in side data.
  const int64_t* strides = nullptr;   // kDebug tensor, in side data.
  union {
    struct {
      uint64_t start_time;
      uint64_t end_time;
    } span;  // kProfile
    struct {
      int32_t allocator_id;
      uint64_t allocation_size;
    } allocation;  // kAllocation
    int64_t int_value;
    double double_value;
    bool bool_value;
    int64_t tensor_offset;  // kDebug tensor: byte offset in the debug buffer.
  };
  // Used while serializing: the Event's offset (a kBlock's: its RunData's),
  // and for a kernel call its OPERATOR_CALL Event's.
  uint32_t serialized = 0;
  uint32_t serialized_twin = 0;
  EtdumpRecord() : span{0, 0} {}
};

}  // namespace etdump
}  // namespace torchlight
