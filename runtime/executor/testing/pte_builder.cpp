#include "runtime/executor/testing/pte_builder.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

namespace torchlight::testing {

std::vector<uint8_t> read_fixture(const std::string& name) {
  const std::string path = std::string(TORCHLIGHT_FIXTURES_DIR) + "/" + name;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    fprintf(stderr, "cannot open fixture %s\n", path.c_str());
    abort();
  }
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

std::unique_ptr<fb::ProgramT> unpack(const std::vector<uint8_t>& pte) {
  flatbuffers::Verifier verifier(pte.data(), pte.size());
  if (!fb::VerifyProgramBuffer(verifier)) {
    fprintf(stderr, "unpack: not a valid program\n");
    abort();
  }
  return std::unique_ptr<fb::ProgramT>(fb::GetProgram(pte.data())->UnPack());
}

void put_u32(std::vector<uint8_t>& bytes, size_t offset, uint32_t value) {
  for (int i = 0; i < 4; ++i) bytes[offset + i] = static_cast<uint8_t>(value >> (8 * i));
}

void put_u64(std::vector<uint8_t>& bytes, size_t offset, uint64_t value) {
  for (int i = 0; i < 8; ++i) bytes[offset + i] = static_cast<uint8_t>(value >> (8 * i));
}

namespace {
size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }
}  // namespace

std::vector<uint8_t> pack(fb::ProgramT& program, const std::vector<std::vector<uint8_t>>& segments,
                          bool extended_header, size_t segment_alignment) {
  program.segments.clear();
  size_t offset = 0;
  for (const auto& segment : segments) {
    auto entry = std::make_unique<fb::DataSegmentT>();
    entry->offset = offset;
    entry->size = segment.size();
    program.segments.push_back(std::move(entry));
    offset = align_up(offset + segment.size(), segment_alignment);
  }
  flatbuffers::FlatBufferBuilder builder;
  builder.Finish(fb::Program::Pack(builder, &program), fb::ProgramIdentifier());
  std::vector<uint8_t> flat(builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize());
  if (!extended_header && segments.empty()) return flat;

  // Insert the 32-byte header after the identifier; only the root offset is
  // absolute, so it is the one value that moves.
  constexpr size_t kHeaderLength = 32;
  std::vector<uint8_t> out(flat.begin(), flat.begin() + 8);
  out.resize(8 + kHeaderLength, 0);
  out.insert(out.end(), flat.begin() + 8, flat.end());
  uint32_t root = 0;
  std::memcpy(&root, flat.data(), 4);
  put_u32(out, 0, root + kHeaderLength);
  std::memcpy(out.data() + 8, "eh00", 4);
  put_u32(out, 12, kHeaderLength);
  const size_t program_size = out.size();
  put_u64(out, 16, program_size);
  const size_t base = segments.empty() ? 0 : align_up(program_size, segment_alignment);
  put_u64(out, 24, base);
  size_t data_size = 0;
  if (!segments.empty()) {
    out.resize(base, 0);
    for (size_t i = 0; i < segments.size(); ++i) {
      out.resize(base + program.segments[i]->offset, 0);
      out.insert(out.end(), segments[i].begin(), segments[i].end());
    }
    data_size = out.size() - base;
  }
  put_u64(out, 32, data_size);
  return out;
}

fb::EValueT tensor_value(fb::ScalarType type, std::vector<int32_t> sizes, int memory_id,
                         uint64_t offset, uint32_t data_buffer_idx,
                         fb::TensorShapeDynamism dynamism) {
  auto t = std::make_unique<fb::TensorT>();
  t->scalar_type = type;
  t->dim_order.resize(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) t->dim_order[i] = static_cast<uint8_t>(i);
  t->sizes = std::move(sizes);
  t->data_buffer_idx = data_buffer_idx;
  t->shape_dynamism = dynamism;
  if (memory_id > 0) {
    t->allocation_info = std::make_unique<fb::AllocationDetailsT>();
    t->allocation_info->memory_id = static_cast<uint32_t>(memory_id);
    t->allocation_info->memory_offset_low = static_cast<uint32_t>(offset);
    t->allocation_info->memory_offset_high = static_cast<uint32_t>(offset >> 32);
  }
  fb::EValueT v;
  v.val.Set(std::move(*t));
  return v;
}

fb::EValueT int_value(int64_t x) {
  fb::IntT v;
  v.int_val = x;
  fb::EValueT e;
  e.val.Set(std::move(v));
  return e;
}

fb::EValueT bool_value(bool x) {
  fb::BoolT v;
  v.bool_val = x;
  fb::EValueT e;
  e.val.Set(std::move(v));
  return e;
}

fb::EValueT double_value(double x) {
  fb::DoubleT v;
  v.double_val = x;
  fb::EValueT e;
  e.val.Set(std::move(v));
  return e;
}

fb::InstructionT kernel_call(int op_index, std::vector<int32_t> args) {
  fb::KernelCallT call;
  call.op_index = op_index;
  call.args = std::move(args);
  fb::InstructionT i;
  i.instr_args.Set(std::move(call));
  return i;
}

fb::InstructionT delegate_call(int delegate_index, std::vector<int32_t> args) {
  fb::DelegateCallT call;
  call.delegate_index = delegate_index;
  call.args = std::move(args);
  fb::InstructionT i;
  i.instr_args.Set(std::move(call));
  return i;
}

fb::InstructionT move_call(int from, int to) {
  fb::MoveCallT call;
  call.move_from = from;
  call.move_to = to;
  fb::InstructionT i;
  i.instr_args.Set(std::move(call));
  return i;
}

fb::InstructionT jump_false_call(int cond, int destination) {
  fb::JumpFalseCallT call;
  call.cond_value_index = cond;
  call.destination_instruction = destination;
  fb::InstructionT i;
  i.instr_args.Set(std::move(call));
  return i;
}

fb::InstructionT free_call(int value) {
  fb::FreeCallT call;
  call.value_index = value;
  fb::InstructionT i;
  i.instr_args.Set(std::move(call));
  return i;
}

std::unique_ptr<fb::OperatorT> op(const std::string& name, const std::string& overload) {
  auto o = std::make_unique<fb::OperatorT>();
  o->name = name;
  o->overload = overload;
  return o;
}

std::unique_ptr<fb::ProgramT> make_program(const std::string& name, std::vector<fb::EValueT> values,
                                           std::vector<int32_t> inputs, std::vector<int32_t> outputs,
                                           std::vector<std::unique_ptr<fb::OperatorT>> operators,
                                           std::vector<fb::InstructionT> instructions,
                                           std::vector<int64_t> arena_sizes) {
  auto plan = std::make_unique<fb::ExecutionPlanT>();
  plan->name = name;
  for (auto& v : values) plan->values.push_back(std::make_unique<fb::EValueT>(std::move(v)));
  plan->inputs = std::move(inputs);
  plan->outputs = std::move(outputs);
  plan->operators = std::move(operators);
  auto chain = std::make_unique<fb::ChainT>();
  for (auto& i : instructions) chain->instructions.push_back(std::make_unique<fb::InstructionT>(std::move(i)));
  plan->chains.push_back(std::move(chain));
  plan->non_const_buffer_sizes.push_back(0);  // Entry 0 is reserved.
  for (int64_t s : arena_sizes) plan->non_const_buffer_sizes.push_back(s);
  auto program = std::make_unique<fb::ProgramT>();
  program->execution_plan.push_back(std::move(plan));
  return program;
}

}  // namespace torchlight::testing

namespace torchlight::testing {

std::vector<uint8_t> program_with_hollow_union(fb::KernelTypes value_type,
                                               fb::InstructionArguments instruction_type) {
  flatbuffers::FlatBufferBuilder b;
  // A null offset is simply not written, which is exactly the missing value.
  const auto seven = fb::CreateEValue(b, fb::KernelTypes::Int, fb::CreateInt(b, 7).Union());
  const auto hollow = value_type == fb::KernelTypes::NONE
                          ? fb::CreateEValue(b, fb::KernelTypes::Null, fb::CreateNull(b).Union())
                          : fb::CreateEValue(b, value_type, 0);
  const auto values = b.CreateVector(std::vector<flatbuffers::Offset<fb::EValue>>{seven, hollow});
  const auto instruction =
      instruction_type == fb::InstructionArguments::NONE
          ? fb::CreateInstruction(b, fb::InstructionArguments::MoveCall,
                                  fb::CreateMoveCall(b, 0, 0).Union())
          : fb::CreateInstruction(b, instruction_type, 0);
  const auto chain = fb::CreateChain(
      b, 0, 0, b.CreateVector(std::vector<flatbuffers::Offset<fb::Instruction>>{instruction}));
  const auto plan = fb::CreateExecutionPlan(
      b, b.CreateString("forward"), 0, values, b.CreateVector(std::vector<int32_t>{}),
      b.CreateVector(std::vector<int32_t>{0}),
      b.CreateVector(std::vector<flatbuffers::Offset<fb::Chain>>{chain}));
  const auto program = fb::CreateProgram(
      b, 0, b.CreateVector(std::vector<flatbuffers::Offset<fb::ExecutionPlan>>{plan}));
  b.Finish(program, fb::ProgramIdentifier());
  return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

}  // namespace torchlight::testing
