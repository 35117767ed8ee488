#include "devtools/etdump/etdump_gen.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "devtools/etdump/etdump_generated.h"
#include "extension/module/module.h"
#include "extension/tensor/owned_tensor.h"
#include "runtime/executor/testing/upstream_fixtures.h"

namespace torchlight {
namespace etdump {
namespace {

using ::torchlight::testing::read_float_file;
using ::torchlight::testing::upstream_fixture;

namespace fb = ::etdump;

// A generator with room for `events` records, plus its output.
struct Trace {
  explicit Trace(size_t events = 256, size_t side = 16384)
      : records(events), side_data(side), gen({records.data(), records.size()},
                                              {side_data.data(), side_data.size()}) {}
  // Serializes and checks the result with flatbuffers' verifier.
  const fb::ETDump* finish() {
    out.assign(gen.serialized_size_bound(), 0xAB);
    auto written = gen.serialize({out.data(), out.size()});
    EXPECT_TRUE(written.ok()) << written.status().message();
    if (!written.ok()) return nullptr;
    out.resize(written->size());
    flatbuffers::Verifier verifier(out.data(), out.size());
    EXPECT_TRUE(fb::VerifySizePrefixedETDumpBuffer(verifier));
    return fb::GetSizePrefixedETDump(out.data());
  }
  std::vector<EtdumpRecord> records;
  std::vector<uint8_t> side_data;
  EtdumpGen gen;
  std::vector<uint8_t> out;
};

std::string name_of(const fb::ProfileEvent* e) {
  return e->name() != nullptr ? e->name()->str() : "<none>";
}

std::vector<std::string> profile_names(const fb::RunData* run) {
  std::vector<std::string> names;
  for (const fb::Event* e : *run->events()) {
    if (e->profile_event() != nullptr) names.push_back(name_of(e->profile_event()));
  }
  return names;
}

// The vtable slot `slot` of the table at `table`: its offset, 0 when the
// field is absent (written as its default).
uint16_t vtable_slot(const void* table, int slot) {
  const auto* p = static_cast<const uint8_t*>(table);
  int32_t soffset;
  std::memcpy(&soffset, p, 4);
  const uint8_t* vtable = p - soffset;
  uint16_t vtable_size;
  std::memcpy(&vtable_size, vtable, 2);
  if (4 + 2 * slot >= vtable_size) return 0;
  uint16_t value;
  std::memcpy(&value, vtable + 4 + 2 * slot, 2);
  return value;
}

TEST(EtdumpGenTest, AddProgramWritesUpstreamBlocksAndEvents) {
  Trace t;
  Module m(upstream_fixture("add.pte"), Module::LoadMode::kFile, &t.gen);
  auto a = OwnedTensor::from_values<float>({1}, {1.5f});
  auto b = OwnedTensor::from_values<float>({1}, {2.25f});
  for (int run = 0; run < 2; ++run) {
    auto out = m.forward({a->evalue(), b->evalue()});
    ASSERT_TRUE(out.ok()) << out.status().message();
  }
  const fb::ETDump* dump = t.finish();
  ASSERT_NE(dump, nullptr);
  EXPECT_EQ(dump->version(), 0u);
  ASSERT_EQ(dump->run_data()->size(), 3u);  // Load, then one block per run.
  const fb::RunData* load = dump->run_data()->Get(0);
  EXPECT_EQ(load->name()->str(), "Default");
  EXPECT_EQ(load->bundled_input_index(), -1);
  EXPECT_THAT(profile_names(load), ::testing::ElementsAre("Method::init", "Program::load_method"));
  for (const fb::Event* e : *load->events()) {
    EXPECT_EQ(e->profile_event()->chain_index(), -1);
    EXPECT_EQ(e->profile_event()->instruction_id(), 0);
    EXPECT_LE(e->profile_event()->start_time(), e->profile_event()->end_time());
  }
  for (int run = 1; run <= 2; ++run) {
    const fb::RunData* exec = dump->run_data()->Get(run);
    EXPECT_EQ(exec->name()->str(), "Execute");
    EXPECT_THAT(profile_names(exec),
                ::testing::ElementsAre("native_call_add.out", "OPERATOR_CALL", "Method::execute"));
    const fb::ProfileEvent* op = exec->events()->Get(1)->profile_event();
    EXPECT_EQ(op->chain_index(), 0);
    EXPECT_EQ(op->instruction_id(), 0);
    EXPECT_EQ(op->delegate_debug_id_int(), -1);
    EXPECT_EQ(op->delegate_debug_id_str(), nullptr);
    const fb::ProfileEvent* method = exec->events()->Get(2)->profile_event();
    EXPECT_EQ(method->chain_index(), -1);
    // The method's span contains the operator's.
    EXPECT_LE(method->start_time(), op->start_time());
    EXPECT_GE(method->end_time(), op->end_time());
  }
  // No debug buffer: nothing but profile events.
  EXPECT_EQ(t.gen.debug_data().size(), 0u);
}

TEST(EtdumpGenTest, WireFactsMatchTheSpec) {
  Trace t;
  Module m(upstream_fixture("add.pte"), Module::LoadMode::kFile, &t.gen);
  auto a = OwnedTensor::from_values<float>({1}, {1.0f});
  ASSERT_TRUE(m.forward({a->evalue(), a->evalue()}).ok());
  const fb::ETDump* dump = t.finish();
  ASSERT_NE(dump, nullptr);
  const std::vector<uint8_t>& bytes = t.out;
  uint32_t prefix;
  std::memcpy(&prefix, bytes.data(), 4);
  EXPECT_EQ(prefix, bytes.size() - 4);  // Size prefix covers the rest.
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(bytes.data()) + 8, 4), "ED00");
  EXPECT_EQ(bytes.size() % 4, 0u);
  EXPECT_EQ(vtable_slot(dump, 0), 0);    // version 0: left out.
  EXPECT_NE(vtable_slot(dump, 1), 0);    // run_data.
  const fb::RunData* run = dump->run_data()->Get(1);
  EXPECT_EQ(vtable_slot(run, 1), 0);     // bundled_input_index -1: left out.
  EXPECT_EQ(vtable_slot(run, 2), 0);     // no allocators.
  const fb::ProfileEvent* op = run->events()->Get(1)->profile_event();
  const fb::ProfileEvent* method = run->events()->Get(2)->profile_event();
  EXPECT_EQ(vtable_slot(op, 1), 0);      // chain_index 0: absent.
  EXPECT_NE(vtable_slot(method, 1), 0);  // chain_index -1: present.
  EXPECT_NE(vtable_slot(op, 2), 0);      // instruction_id 0 (default -1): present.
  EXPECT_NE(vtable_slot(method, 2), 0);  // instruction_id 0 (default -1): present.
  EXPECT_EQ(vtable_slot(op, 3), 0);      // delegate_debug_id_int -1: absent.
  EXPECT_EQ(vtable_slot(op, 5), 0);      // no metadata on operator events.
  // An event holds exactly one of its three tables, in slot 0.
  EXPECT_NE(vtable_slot(run->events()->Get(1), 0), 0);
  EXPECT_EQ(vtable_slot(run->events()->Get(1), 1), 0);
  EXPECT_EQ(vtable_slot(run->events()->Get(1), 2), 0);
}

TEST(EtdumpGenTest, DebugBufferHoldsIntermediateAndOutputTensors) {
  Trace t;
  std::vector<uint8_t> debug(1024, 0xEE);
  t.gen.set_debug_buffer({debug.data(), debug.size()});
  Module m(upstream_fixture("linear_constant_buffer.pte"), Module::LoadMode::kFile, &t.gen);
  const std::vector<float> x = {1, 2, 3, 4};
  auto input = OwnedTensor::from_values<float>({2, 2}, {x[0], x[1], x[2], x[3]});
  ASSERT_TRUE(m.forward({input->evalue()}).ok());
  EXPECT_EQ(t.gen.debug_values_dropped(), 0u);
  const fb::ETDump* dump = t.finish();
  ASSERT_NE(dump, nullptr);
  const fb::RunData* run = dump->run_data()->Get(1);
  std::vector<const fb::DebugEvent*> debug_events;
  for (const fb::Event* e : *run->events()) {
    if (e->debug_event() != nullptr) debug_events.push_back(e->debug_event());
  }
  // mul's output, add's output, then the program output.
  ASSERT_EQ(debug_events.size(), 3u);
  const std::vector<std::vector<float>> expected = {
      {3 * x[0], 3 * x[1], 3 * x[2], 3 * x[3]},
      {3 * x[0] + 2, 3 * x[1] + 2, 3 * x[2] + 2, 3 * x[3] + 2},
      {3 * x[0] + 2, 3 * x[1] + 2, 3 * x[2] + 2, 3 * x[3] + 2}};
  for (size_t i = 0; i < debug_events.size(); ++i) {
    const fb::DebugEvent* e = debug_events[i];
    const fb::Value* v = e->debug_entry();
    ASSERT_EQ(v->val(), fb::ValueType::Tensor);
    const fb::Tensor* tensor = v->tensor();
    EXPECT_EQ(tensor->scalar_type(), fb::ScalarType::FLOAT);
    EXPECT_THAT(std::vector<int64_t>(tensor->sizes()->begin(), tensor->sizes()->end()),
                ::testing::ElementsAre(2, 2));
    EXPECT_THAT(std::vector<int64_t>(tensor->strides()->begin(), tensor->strides()->end()),
                ::testing::ElementsAre(2, 1));
    EXPECT_EQ(tensor->offset() % 64, 0);
    ASSERT_LE(static_cast<size_t>(tensor->offset()) + 16, t.gen.debug_data().size());
    float got[4];
    std::memcpy(got, debug.data() + tensor->offset(), sizeof(got));
    for (int k = 0; k < 4; ++k) EXPECT_FLOAT_EQ(got[k], expected[i][k]) << i << "," << k;
    const bool is_output = i == 2;
    EXPECT_EQ(v->output() != nullptr && v->output()->bool_val(), is_output);
    if (is_output) {
      EXPECT_EQ(e->chain_index(), UINT64_MAX);  // Chain -1 in the unsigned field.
      EXPECT_EQ(e->instruction_id(), 0);
    } else {
      EXPECT_EQ(e->chain_index(), 0u);
      EXPECT_EQ(e->instruction_id(), static_cast<int32_t>(i));
    }
  }
  // Padding between blobs is zeroed.
  EXPECT_EQ(debug[16], 0);
  EXPECT_EQ(debug[63], 0);
}

TEST(EtdumpGenTest, TooSmallDebugBufferDropsValuesWithoutOverflow) {
  Trace t;
  std::vector<uint8_t> debug(64 + 8, 0xEE);  // Room for one 16-byte blob.
  t.gen.set_debug_buffer({debug.data(), 24});
  Module m(upstream_fixture("linear_constant_buffer.pte"), Module::LoadMode::kFile, &t.gen);
  auto input = OwnedTensor::from_values<float>({2, 2}, {1, 2, 3, 4});
  ASSERT_TRUE(m.forward({input->evalue()}).ok());
  EXPECT_EQ(t.gen.debug_values_dropped(), 2u);
  EXPECT_EQ(t.gen.debug_bytes_needed(), 64u * 2 + 16);
  EXPECT_EQ(t.gen.debug_data().size(), 16u);
  for (size_t i = 24; i < debug.size(); ++i) EXPECT_EQ(debug[i], 0xEE) << i;
  const fb::ETDump* dump = t.finish();
  ASSERT_NE(dump, nullptr);
  size_t debug_events = 0;
  for (const fb::Event* e : *dump->run_data()->Get(1)->events()) debug_events += e->debug_event() != nullptr;
  EXPECT_EQ(debug_events, 1u);  // Only the value that fit.
}

TEST(EtdumpGenTest, FullRecordStorageStopsRecordingAndCounts) {
  Trace t(/*events=*/3);
  Module m(upstream_fixture("add.pte"), Module::LoadMode::kFile, &t.gen);
  auto a = OwnedTensor::from_values<float>({1}, {1.0f});
  ASSERT_TRUE(m.forward({a->evalue(), a->evalue()}).ok());
  // Default block + 2 load events fill it; the execute block's 3 are dropped.
  EXPECT_EQ(t.gen.records_used(), 3u);
  EXPECT_EQ(t.gen.events_dropped(), 3u);
  const fb::ETDump* dump = t.finish();
  ASSERT_NE(dump, nullptr);
  EXPECT_EQ(dump->run_data()->size(), 1u);
}

TEST(EtdumpGenTest, TooSmallOutputBufferIsAnErrorNamingTheSizes) {
  Trace t;
  Module m(upstream_fixture("add.pte"), Module::LoadMode::kFile, &t.gen);
  ASSERT_TRUE(m.load_method("forward").ok());
  std::vector<uint8_t> out(100, 0);
  auto written = t.gen.serialize({out.data(), out.size()});
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(written.status().code(), Error::kMemoryAllocationFailed);
  EXPECT_THAT(written.status().message(), ::testing::HasSubstr("has 100 bytes"));
}

TEST(EtdumpGenTest, DelegateEventsCarryTheirIdsAndMetadata) {
  Trace t;
  auto entry = t.gen.begin_method("forward", false);
  auto instr = t.gen.begin_instruction(0, 2, "XnnpackBackend", InstructionKind::kDelegate);
  auto d = t.gen.start_profiling_delegate("linear #1", 0);
  const uint8_t meta[] = {1, 2, 3};
  t.gen.end_profiling_delegate(d, meta, sizeof(meta));
  t.gen.log_profiling_delegate(nullptr, 7, 100, 250, nullptr, 0);
  t.gen.end_instruction(instr);
  t.gen.end_method(entry);
  const fb::ETDump* dump = t.finish();
  ASSERT_NE(dump, nullptr);
  const fb::RunData* run = dump->run_data()->Get(0);
  ASSERT_EQ(run->events()->size(), 4u);
  const fb::ProfileEvent* by_name = run->events()->Get(0)->profile_event();
  EXPECT_EQ(by_name->name(), nullptr);
  EXPECT_EQ(by_name->delegate_debug_id_str()->str(), "linear #1");
  EXPECT_EQ(by_name->delegate_debug_id_int(), -1);
  EXPECT_EQ(by_name->chain_index(), 0);
  EXPECT_EQ(by_name->instruction_id(), 2);
  EXPECT_THAT(std::vector<uint8_t>(by_name->delegate_debug_metadata()->begin(),
                                   by_name->delegate_debug_metadata()->end()),
              ::testing::ElementsAre(1, 2, 3));
  const fb::ProfileEvent* by_id = run->events()->Get(1)->profile_event();
  EXPECT_EQ(by_id->delegate_debug_id_int(), 7);
  EXPECT_EQ(by_id->delegate_debug_id_str(), nullptr);
  EXPECT_EQ(by_id->start_time(), 100u);
  EXPECT_EQ(by_id->end_time(), 250u);
  ASSERT_NE(by_id->delegate_debug_metadata(), nullptr);  // Written even when empty.
  EXPECT_EQ(by_id->delegate_debug_metadata()->size(), 0u);
  EXPECT_EQ(name_of(run->events()->Get(2)->profile_event()), "DELEGATE_CALL");
  EXPECT_EQ(run->events()->Get(2)->profile_event()->instruction_id(), 2);
  EXPECT_EQ(name_of(run->events()->Get(3)->profile_event()), "Method::execute");
}

TEST(EtdumpGenTest, AllocatorsAreOneBasedAndListedInTheirBlock) {
  Trace t;
  auto entry = t.gen.begin_method("forward", true);
  EXPECT_EQ(t.gen.track_allocator("planned"), 1);
  EXPECT_EQ(t.gen.track_allocator("temp"), 2);
  t.gen.track_allocation(2, 4096);
  t.gen.end_method(entry);
  const fb::ETDump* dump = t.finish();
  ASSERT_NE(dump, nullptr);
  const fb::RunData* run = dump->run_data()->Get(0);
  ASSERT_EQ(run->allocators()->size(), 2u);
  EXPECT_EQ(run->allocators()->Get(0)->name()->str(), "planned");
  EXPECT_EQ(run->allocators()->Get(1)->name()->str(), "temp");
  const fb::AllocationEvent* alloc = run->events()->Get(0)->allocation_event();
  ASSERT_NE(alloc, nullptr);
  EXPECT_EQ(alloc->allocator_id(), 2);
  EXPECT_EQ(alloc->allocation_size(), 4096u);
  EXPECT_EQ(vtable_slot(run->events()->Get(0), 0), 0);  // Allocation event: slots [0, 4].
  EXPECT_NE(vtable_slot(run->events()->Get(0), 1), 0);
}

// serialize() never asks for more than serialized_size_bound(): a mix of
// every event kind, with long names and many dims, fits in exactly that.
TEST(EtdumpGenTest, SizeBoundHoldsForEveryEventKind) {
  Trace t(4096, 1 << 20);
  std::vector<uint8_t> debug(1 << 20);
  t.gen.set_debug_buffer({debug.data(), debug.size()});
  const std::string long_op = "namespace::" + std::string(300, 'x') + ".out";
  std::vector<int32_t> sizes(16, 1);
  std::vector<uint8_t> dim_order(16);
  std::vector<int64_t> strides(16, 1);
  for (size_t i = 0; i < 16; ++i) dim_order[i] = static_cast<uint8_t>(i);
  float value = 1.0f;
  TensorImpl impl(ScalarType::kFloat, 16, sizes.data(), &value, dim_order.data(), strides.data());
  const EValue tensor{Tensor(&impl)};
  for (int block = 0; block < 20; ++block) {
    auto m = t.gen.begin_method("forward", block == 0);
    if (block == 0) t.gen.track_allocator(std::string(100, 'a').c_str());
    for (int i = 0; i < 20; ++i) {
      auto e = t.gen.begin_instruction(0, i, long_op.c_str(),
                                       i % 2 ? InstructionKind::kKernel : InstructionKind::kMove);
      t.gen.log_profiling_delegate(i % 3 ? "node" : nullptr, i, 1, 2, long_op.data(), i);
      t.gen.end_instruction(e);
      t.gen.log_value(0, tensor);
      t.gen.log_value(0, EValue(int64_t{i}));
      t.gen.track_allocation(1, 8);
    }
    t.gen.log_output(0, EValue(true));
    t.gen.end_method(m);
  }
  ASSERT_EQ(t.gen.events_dropped(), 0u);
  const fb::ETDump* dump = t.finish();
  ASSERT_NE(dump, nullptr);
  EXPECT_EQ(dump->run_data()->size(), 20u);
  // Instruction 1 (a kernel): its delegate event, native_call_, OPERATOR_CALL.
  const auto* events = dump->run_data()->Get(1)->events();
  EXPECT_EQ(name_of(events->Get(6)->profile_event()), "native_call_" + std::string(300, 'x') + ".out");
  EXPECT_EQ(name_of(events->Get(7)->profile_event()), "OPERATOR_CALL");
  EXPECT_EQ(events->Get(7)->profile_event()->instruction_id(), 1);
}

}  // namespace
}  // namespace etdump
}  // namespace torchlight

namespace torchlight {
namespace etdump {
namespace {

// Upstream's delegated MLP: the XNNPACK delegate times its init in the load
// block and reports each XNNPACK operator under the DELEGATE_CALL.
TEST(EtdumpGenTest, XnnpackDelegateReportsInitAndEachOperator) {
  Trace t;
  std::vector<uint8_t> debug(4096);
  t.gen.set_debug_buffer({debug.data(), debug.size()});
  Module m(upstream_fixture("mlp_xnnpack.pte"), Module::LoadMode::kFile, &t.gen);
  const std::vector<float> x = read_float_file(upstream_fixture("mlp_xnnpack.input0.bin"));
  const std::vector<float> expected = read_float_file(upstream_fixture("mlp_xnnpack.output0.bin"));
  ASSERT_EQ(x.size(), 32u);
  auto input = OwnedTensor::from_data(ScalarType::kFloat, {2, 16}, x.data(), x.size() * 4);
  ASSERT_TRUE(input.ok());
  auto out = m.forward({input->evalue()});
  ASSERT_TRUE(out.ok()) << out.status().message();
  const fb::ETDump* dump = t.finish();
  ASSERT_NE(dump, nullptr);
  const fb::RunData* load = dump->run_data()->Get(0);
  const fb::ProfileEvent* init = load->events()->Get(0)->profile_event();
  ASSERT_NE(init->delegate_debug_id_str(), nullptr);
  EXPECT_EQ(init->delegate_debug_id_str()->str(), "XnnpackBackend::init");
  EXPECT_EQ(init->name(), nullptr);
  EXPECT_EQ(init->delegate_debug_id_int(), -1);

  const fb::RunData* run = dump->run_data()->Get(1);
  std::vector<std::string> delegate_ids;
  uint64_t delegate_ns = 0;
  const fb::ProfileEvent* call = nullptr;
  for (const fb::Event* e : *run->events()) {
    const fb::ProfileEvent* p = e->profile_event();
    if (p == nullptr) continue;
    if (p->delegate_debug_id_str() != nullptr) {
      delegate_ids.push_back(p->delegate_debug_id_str()->str());
      EXPECT_EQ(p->name(), nullptr);
      EXPECT_EQ(p->chain_index(), 0);
      EXPECT_LE(p->start_time(), p->end_time());
      delegate_ns += p->end_time() - p->start_time();
    } else if (name_of(p) == "DELEGATE_CALL") {
      call = p;
    }
  }
  ASSERT_NE(call, nullptr);
  // Linear, ReLU, Linear: one event per XNNPACK operator, "<name> #<n>".
  ASSERT_GE(delegate_ids.size(), 2u);
  for (const std::string& id : delegate_ids) EXPECT_THAT(id, ::testing::MatchesRegex(".+ #[0-9]+"));
  EXPECT_THAT(delegate_ids, ::testing::Contains(::testing::HasSubstr("#2")));
  // The operators' times (whole microseconds) fit inside the call.
  EXPECT_LE(delegate_ns, call->end_time() - call->start_time());
  // Debug events: every argument of the call, then the program output,
  // which matches eager PyTorch's.
  const fb::DebugEvent* output = nullptr;
  size_t call_args = 0;
  for (const fb::Event* e : *run->events()) {
    const fb::DebugEvent* d = e->debug_event();
    if (d == nullptr) continue;
    if (d->debug_entry()->output() != nullptr) {
      output = d;
    } else {
      EXPECT_EQ(d->instruction_id(), call->instruction_id());
      ++call_args;
    }
  }
  EXPECT_EQ(call_args, 2u);  // Input and output.
  ASSERT_NE(output, nullptr);
  const fb::Tensor* tensor = output->debug_entry()->tensor();
  ASSERT_EQ(expected.size(), 8u);
  for (size_t i = 0; i < expected.size(); ++i) {
    float v;
    std::memcpy(&v, debug.data() + tensor->offset() + 4 * i, 4);
    EXPECT_NEAR(v, expected[i], 1e-5f) << i;
  }
}

}  // namespace
}  // namespace etdump
}  // namespace torchlight
