// Structure-aware mutation of .pte inputs (libFuzzer's custom mutator).
//
// Byte flips rarely survive the flatbuffer verifier, so most of them test
// only the verifier. This mutator unpacks the Program through the object
// API, changes one to three fields (an integer, an enum, a union's kind, a
// vector's length or order, an optional table, a name, a blob), packs it
// again and puts the extended header and the segment bytes back, so the
// result is a well-formed file whose content is wrong in one deep place.
// One mutation in four, and any input that does not unpack, falls back to
// libFuzzer's byte-level mutator, which also keeps the verifier covered.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "schema/program_generated.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace torchlight {
namespace fuzz {
namespace {

constexpr size_t kHeaderOffset = 8;  // After the root offset and "ET12".
constexpr size_t kHeaderLength = 32;
constexpr size_t kSegmentAlignment = 16;

uint64_t read_u64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

void put_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

void put_u64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

// One mutable place in the unpacked program.
struct Site {
  enum class Kind { kInt, kAction };
  Kind kind = Kind::kInt;
  // kInt: the field and its width/signedness.
  void* field = nullptr;
  int bits = 0;
  bool is_signed = false;
  // kAction: a structural change (resize, swap, union kind, optional table).
  std::function<void(std::mt19937_64&)> action;
};

class SiteCollector {
 public:
  std::vector<Site> sites;
  int64_t num_values = 0;  // Of the plan being walked: index-like values near it.

  template <typename T>
  void integer(T* field) {
    Site s;
    s.kind = Site::Kind::kInt;
    s.field = field;
    s.bits = sizeof(T) * 8;
    s.is_signed = std::numeric_limits<T>::is_signed;
    sites.push_back(std::move(s));
  }
  template <typename E>
  void enumeration(E* field) {
    integer(reinterpret_cast<std::underlying_type_t<E>*>(field));
  }
  void action(std::function<void(std::mt19937_64&)> f) {
    Site s;
    s.kind = Site::Kind::kAction;
    s.action = std::move(f);
    sites.push_back(std::move(s));
  }

  // A vector of integers: each element, plus growing and shrinking it.
  template <typename T>
  void int_vector(std::vector<T>* v) {
    for (T& item : *v) integer(&item);
    action([v](std::mt19937_64& rng) {
      switch (rng() % 4) {
        case 0: if (!v->empty()) v->erase(v->begin() + rng() % v->size()); break;
        case 1: v->push_back(v->empty() ? T(0) : (*v)[rng() % v->size()]); break;
        case 2: v->push_back(static_cast<T>(rng() % 8)); break;
        case 3: v->clear(); break;
      }
    });
  }
  // Vectors of tables: drop, repeat-by-move is not possible, so drop or swap.
  template <typename T>
  void table_vector(std::vector<std::unique_ptr<T>>* v) {
    action([v](std::mt19937_64& rng) {
      if (v->empty()) return;
      if (rng() % 2 == 0) {
        v->erase(v->begin() + rng() % v->size());
      } else {
        std::swap((*v)[rng() % v->size()], (*v)[rng() % v->size()]);
      }
    });
  }
  // A byte blob (constant data, delegate payload, compile spec value).
  void blob(std::vector<uint8_t>* v) {
    action([v](std::mt19937_64&) {
      const size_t size = v->size();
      v->resize(size * 2 + 64);
      v->resize(LLVMFuzzerMutate(v->data(), size, v->size()));
    });
  }
  // A name: one of the names programs use, or bytes changed.
  void name(std::string* s) {
    action([s](std::mt19937_64& rng) {
      static const char* const kNames[] = {
          "", "forward", "aten::add", "aten::mul", "aten::mm", "aten::view_copy",
          "aten::index", "aten::cat", "aten::embedding", "aten::_softmax", "out", "Tensor_out",
          "Scalar_out", "TorchlightTestBackend", "XnnpackBackend", "version", "get_max_seq_len",
          "get_eos_ids", "get_tokenizer", "et_view", "llm::sdpa_with_kv_cache"};
      if (rng() % 2 == 0) {
        *s = kNames[rng() % (sizeof(kNames) / sizeof(kNames[0]))];
      } else {
        const size_t size = s->size();
        s->resize(size * 2 + 16);
        s->resize(LLVMFuzzerMutate(reinterpret_cast<uint8_t*>(&(*s)[0]), size, s->size()));
      }
    });
  }

  void tensor(fb::TensorT* t) {
    enumeration(&t->scalar_type);
    integer(&t->storage_offset);
    int_vector(&t->sizes);
    int_vector(&t->dim_order);
    integer(&t->data_buffer_idx);
    integer(&t->layout);
    enumeration(&t->shape_dynamism);
    if (t->allocation_info) {
      integer(&t->allocation_info->memory_id);
      integer(&t->allocation_info->memory_offset_low);
      integer(&t->allocation_info->memory_offset_high);
    }
    if (t->extra_tensor_info) {
      integer(&t->extra_tensor_info->mutable_data_segments_idx);
      enumeration(&t->extra_tensor_info->location);
      name(&t->extra_tensor_info->fully_qualified_name);
    }
    action([t](std::mt19937_64& rng) {  // Planned <-> constant/unplanned.
      if (t->allocation_info) {
        t->allocation_info.reset();
      } else {
        t->allocation_info = std::make_unique<fb::AllocationDetailsT>();
        t->allocation_info->memory_id = static_cast<uint32_t>(rng() % 3);
        t->allocation_info->memory_offset_low = static_cast<uint32_t>(rng() % 256);
      }
    });
    action([t](std::mt19937_64& rng) {
      if (t->extra_tensor_info) {
        t->extra_tensor_info.reset();
      } else {
        t->extra_tensor_info = std::make_unique<fb::ExtraTensorInfoT>();
        t->extra_tensor_info->mutable_data_segments_idx = rng() % 2;
      }
    });
  }

  void evalue(fb::EValueT* e) {
    fb::KernelTypesUnion& u = e->val;
    // A kind with no table (a defect the runtime must reject) unpacks to a
    // null value, which Pack would dereference: make it None.
    if (u.value == nullptr) u.Reset();
    switch (u.type) {
      case fb::KernelTypes::Int: integer(&u.AsInt()->int_val); break;
      case fb::KernelTypes::Bool: {
        fb::BoolT* b = u.AsBool();
        action([b](std::mt19937_64&) { b->bool_val = !b->bool_val; });
        break;
      }
      case fb::KernelTypes::Tensor: tensor(u.AsTensor()); break;
      case fb::KernelTypes::String: name(&u.AsString()->string_val); break;
      case fb::KernelTypes::IntList: int_vector(&u.AsIntList()->items); break;
      case fb::KernelTypes::TensorList: int_vector(&u.AsTensorList()->items); break;
      case fb::KernelTypes::OptionalTensorList: int_vector(&u.AsOptionalTensorList()->items); break;
      default: break;
    }
    const int64_t values = num_values;
    action([e, values](std::mt19937_64& rng) {  // Another kind of value in this slot.
      const auto index = [&] { return static_cast<int32_t>(rng() % (values + 2)) - 1; };
      switch (rng() % 9) {
        case 0: e->val.Set(fb::NullT()); break;
        case 1: { fb::IntT v; v.int_val = static_cast<int64_t>(rng() % 16) - 4; e->val.Set(std::move(v)); break; }
        case 2: { fb::BoolT v; v.bool_val = rng() % 2; e->val.Set(std::move(v)); break; }
        case 3: { fb::DoubleT v; v.double_val = 0.5; e->val.Set(std::move(v)); break; }
        case 4: {
          fb::TensorT v;
          v.scalar_type = static_cast<fb::ScalarType>(rng() % 30);
          for (size_t d = rng() % 4; d > 0; --d) v.sizes.push_back(static_cast<int32_t>(rng() % 5));
          for (size_t d = 0; d < v.sizes.size(); ++d) v.dim_order.push_back(static_cast<uint8_t>(d));
          if (rng() % 2) {
            v.allocation_info = std::make_unique<fb::AllocationDetailsT>();
            v.allocation_info->memory_id = 1;
          }
          e->val.Set(std::move(v));
          break;
        }
        case 5: { fb::StringT v; v.string_val = "s"; e->val.Set(std::move(v)); break; }
        case 6: { fb::IntListT v; for (size_t i = rng() % 4; i > 0; --i) v.items.push_back(index()); e->val.Set(std::move(v)); break; }
        case 7: { fb::TensorListT v; for (size_t i = rng() % 4; i > 0; --i) v.items.push_back(index()); e->val.Set(std::move(v)); break; }
        case 8: { fb::OptionalTensorListT v; for (size_t i = rng() % 4; i > 0; --i) v.items.push_back(index()); e->val.Set(std::move(v)); break; }
      }
    });
  }

  void instruction(fb::InstructionT* instruction) {
    fb::InstructionArgumentsUnion& u = instruction->instr_args;
    if (u.value == nullptr) u.Reset();  // As in evalue().
    switch (u.type) {
      case fb::InstructionArguments::KernelCall:
        integer(&u.AsKernelCall()->op_index);
        int_vector(&u.AsKernelCall()->args);
        break;
      case fb::InstructionArguments::DelegateCall:
        integer(&u.AsDelegateCall()->delegate_index);
        int_vector(&u.AsDelegateCall()->args);
        break;
      case fb::InstructionArguments::MoveCall:
        integer(&u.AsMoveCall()->move_from);
        integer(&u.AsMoveCall()->move_to);
        break;
      case fb::InstructionArguments::JumpFalseCall:
        integer(&u.AsJumpFalseCall()->cond_value_index);
        integer(&u.AsJumpFalseCall()->destination_instruction);
        break;
      case fb::InstructionArguments::FreeCall:
        integer(&u.AsFreeCall()->value_index);
        break;
      default: break;
    }
    const int64_t values = num_values;
    action([instruction, values](std::mt19937_64& rng) {  // Another kind of instruction.
      const auto index = [&] { return static_cast<int32_t>(rng() % (values + 2)) - 1; };
      fb::InstructionArgumentsUnion& args = instruction->instr_args;
      switch (rng() % 5) {
        case 0: { fb::KernelCallT c; c.op_index = static_cast<int32_t>(rng() % 4); for (size_t i = rng() % 6; i > 0; --i) c.args.push_back(index()); args.Set(std::move(c)); break; }
        case 1: { fb::DelegateCallT c; c.delegate_index = static_cast<int32_t>(rng() % 2); for (size_t i = rng() % 6; i > 0; --i) c.args.push_back(index()); args.Set(std::move(c)); break; }
        case 2: { fb::MoveCallT c; c.move_from = index(); c.move_to = index(); args.Set(std::move(c)); break; }
        case 3: { fb::JumpFalseCallT c; c.cond_value_index = index(); c.destination_instruction = static_cast<int32_t>(rng() % 4); args.Set(std::move(c)); break; }
        case 4: { fb::FreeCallT c; c.value_index = index(); args.Set(std::move(c)); break; }
      }
    });
  }

  void plan(fb::ExecutionPlanT* p) {
    num_values = static_cast<int64_t>(p->values.size());
    name(&p->name);
    for (auto& value : p->values) {
      if (value) evalue(value.get());
    }
    table_vector(&p->values);
    int_vector(&p->inputs);
    int_vector(&p->outputs);
    for (auto& chain : p->chains) {
      if (!chain) continue;
      int_vector(&chain->inputs);
      int_vector(&chain->outputs);
      for (auto& instruction : chain->instructions) {
        if (instruction) this->instruction(instruction.get());
      }
      table_vector(&chain->instructions);
    }
    table_vector(&p->chains);
    for (auto& op : p->operators) {
      if (!op) continue;
      name(&op->name);
      name(&op->overload);
    }
    table_vector(&p->operators);
    for (auto& delegate : p->delegates) {
      if (!delegate) continue;
      name(&delegate->id);
      if (delegate->processed) {
        enumeration(&delegate->processed->location);
        integer(&delegate->processed->index);
      }
      for (auto& spec : delegate->compile_specs) {
        if (!spec) continue;
        name(&spec->key);
        blob(&spec->value);
      }
    }
    table_vector(&p->delegates);
    int_vector(&p->non_const_buffer_sizes);
  }

  void program(fb::ProgramT* p) {
    integer(&p->version);
    for (auto& plan : p->execution_plan) {
      if (plan) this->plan(plan.get());
    }
    table_vector(&p->execution_plan);
    for (auto& buffer : p->constant_buffer) {
      if (buffer) blob(&buffer->storage);
    }
    table_vector(&p->constant_buffer);
    for (auto& data : p->backend_delegate_data) {
      if (data) blob(&data->data);
    }
    for (auto& segment : p->segments) {
      if (!segment) continue;
      integer(&segment->offset);
      integer(&segment->size);
    }
    table_vector(&p->segments);
    if (p->constant_segment) {
      integer(&p->constant_segment->segment_index);
      int_vector(&p->constant_segment->offsets);
    }
    for (auto& mutable_data : p->mutable_data_segments) {
      if (!mutable_data) continue;
      integer(&mutable_data->segment_index);
      int_vector(&mutable_data->offsets);
    }
    for (auto& named : p->named_data) {
      if (!named) continue;
      name(&named->key);
      integer(&named->segment_index);
    }
  }
};

// A new value for an integer field: boundaries, small indices, nearby
// values, a flipped bit.
void mutate_integer(const Site& site, std::mt19937_64& rng) {
  int64_t old = 0;
  switch (site.bits) {
    case 8: old = site.is_signed ? *static_cast<int8_t*>(site.field) : *static_cast<uint8_t*>(site.field); break;
    case 16: old = site.is_signed ? *static_cast<int16_t*>(site.field) : *static_cast<uint16_t*>(site.field); break;
    case 32: old = site.is_signed ? *static_cast<int32_t*>(site.field) : *static_cast<uint32_t*>(site.field); break;
    default: std::memcpy(&old, site.field, 8); break;
  }
  static const int64_t kInteresting[] = {
      0, 1, 2, 3, 4, -1, -2, 7, 8, 15, 16, 31, 32, 63, 64, 127, 128, 255, 256, 1023, 1024,
      4095, 4096, 65535, 65536, INT32_MAX, INT32_MIN, static_cast<int64_t>(UINT32_MAX),
      INT64_MAX, INT64_MIN, int64_t(1) << 31, int64_t(1) << 32, int64_t(1) << 40};
  int64_t value;
  switch (rng() % 4) {
    case 0: value = kInteresting[rng() % (sizeof(kInteresting) / sizeof(kInteresting[0]))]; break;
    case 1: value = static_cast<int64_t>(static_cast<uint64_t>(old) + rng() % 9 - 4); break;  // Wraps.
    case 2: value = old ^ (int64_t(1) << (rng() % site.bits)); break;
    default: value = static_cast<int64_t>(rng() % 12) - 2; break;
  }
  switch (site.bits) {
    case 8: *static_cast<uint8_t*>(site.field) = static_cast<uint8_t>(value); break;
    case 16: *static_cast<uint16_t*>(site.field) = static_cast<uint16_t>(value); break;
    case 32: *static_cast<uint32_t*>(site.field) = static_cast<uint32_t>(value); break;
    default: std::memcpy(site.field, &value, 8); break;
  }
}

// The flatbuffer of `data` (bounded by the extended header when there is
// one) and the segment bytes after it.
struct Parts {
  std::unique_ptr<fb::ProgramT> program;
  bool had_header = false;
  std::vector<uint8_t> segments;
};

bool unpack(const uint8_t* data, size_t size, Parts* parts) {
  if (size < kHeaderOffset + 4) return false;
  size_t program_size = size;
  if (std::memcmp(data + kHeaderOffset, "eh00", 4) == 0 && size >= kHeaderOffset + kHeaderLength) {
    parts->had_header = true;
    const uint64_t declared = read_u64(data + kHeaderOffset + 8);
    const uint64_t base = read_u64(data + kHeaderOffset + 16);
    if (declared > size || declared < kHeaderOffset + kHeaderLength) return false;
    program_size = static_cast<size_t>(declared);
    if (base >= program_size && base <= size) parts->segments.assign(data + base, data + size);
  }
  flatbuffers::Verifier verifier(data, program_size);
  if (!fb::VerifyProgramBuffer(verifier)) return false;
  parts->program.reset(fb::GetProgram(data)->UnPack());
  return parts->program != nullptr;
}

std::vector<uint8_t> pack(Parts& parts) {
  flatbuffers::FlatBufferBuilder builder;
  builder.Finish(fb::Program::Pack(builder, parts.program.get()), fb::ProgramIdentifier());
  const uint8_t* flat = builder.GetBufferPointer();
  const size_t flat_size = builder.GetSize();
  if (!parts.had_header && parts.segments.empty()) return std::vector<uint8_t>(flat, flat + flat_size);
  // The header goes after the identifier; only the root offset (absolute
  // from byte 0) crosses it, so only it moves. 32 keeps 16-byte alignment.
  std::vector<uint8_t> out(flat, flat + kHeaderOffset);
  out.resize(kHeaderOffset + kHeaderLength);
  out.insert(out.end(), flat + kHeaderOffset, flat + flat_size);
  uint32_t root = 0;
  std::memcpy(&root, out.data(), 4);
  put_u32(out.data(), root + kHeaderLength);
  const size_t program_size = out.size();
  const size_t base = (program_size + kSegmentAlignment - 1) / kSegmentAlignment * kSegmentAlignment;
  uint8_t* h = out.data() + kHeaderOffset;
  std::memcpy(h, "eh00", 4);
  put_u32(h + 4, kHeaderLength);
  put_u64(h + 8, program_size);
  put_u64(h + 16, parts.segments.empty() ? 0 : base);
  put_u64(h + 24, parts.segments.size());
  if (!parts.segments.empty()) {
    out.resize(base);
    out.insert(out.end(), parts.segments.begin(), parts.segments.end());
  }
  return out;
}

}  // namespace
}  // namespace fuzz
}  // namespace torchlight

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  using namespace torchlight::fuzz;
  std::mt19937_64 rng(seed);
  if (rng() % 4 == 0) return LLVMFuzzerMutate(data, size, max_size);
  Parts parts;
  if (!unpack(data, size, &parts)) return LLVMFuzzerMutate(data, size, max_size);
  SiteCollector collector;
  collector.program(parts.program.get());
  if (!parts.segments.empty()) {
    std::vector<uint8_t>* segments = &parts.segments;
    collector.blob(segments);
  }
  if (collector.sites.empty()) return LLVMFuzzerMutate(data, size, max_size);
  // Sites point into the tree, so pick them all before any structural change.
  std::vector<Site*> chosen;
  for (size_t n = 1 + rng() % 3; n > 0; --n) chosen.push_back(&collector.sites[rng() % collector.sites.size()]);
  for (Site* site : chosen) {
    if (site->kind == Site::Kind::kInt) mutate_integer(*site, rng);
  }
  for (Site* site : chosen) {
    if (site->kind == Site::Kind::kAction) {
      site->action(rng);
      break;  // One structural change: it may free what other sites point into.
    }
  }
  const std::vector<uint8_t> out = pack(parts);
  if (out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}
