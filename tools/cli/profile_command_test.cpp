// `torchlight run --etdump` and `torchlight profile`, end to end through the
// built binary, plus the profile table on hand-made records.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "devtools/etdump/etdump_generated.h"
#include "tools/cli/profile_table.h"

namespace torchlight {
namespace cli {
namespace {

namespace fs = std::filesystem;
using testing::HasSubstr;

const std::string kFixtures = TORCHLIGHT_FIXTURES_DIR;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct ToolResult {
  int status = -1;
  std::string out;
  std::string err;
};

class ProfileCliTest : public testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/torchlight_profile_test_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  // Arguments are fixture paths and options without spaces or quotes.
  ToolResult run(const std::string& args) {
    const std::string command = std::string(TORCHLIGHT_CLI_PATH) + " " + args + " >" +
                                path("out.txt") + " 2>" + path("err.txt");
    ToolResult r;
    const int raw = std::system(command.c_str());
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = read_file(path("out.txt"));
    r.err = read_file(path("err.txt"));
    return r;
  }

  std::string dir_;
};

const ::etdump::ETDump* parse(const std::string& bytes) {
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  if (!::etdump::VerifySizePrefixedETDumpBuffer(verifier)) return nullptr;
  return ::etdump::GetSizePrefixedETDump(bytes.data());
}

TEST_F(ProfileCliTest, RunWritesOneExecuteBlockPerRepeat) {
  const std::string etdp = path("add.etdp");
  ToolResult r = run("run " + kFixtures + "/add.pte --etdump " + etdp + " --repeat 3");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("wrote     " + etdp));
  EXPECT_FALSE(fs::exists(etdp + ".debug"));
  const std::string bytes = read_file(etdp);
  const ::etdump::ETDump* dump = parse(bytes);
  ASSERT_NE(dump, nullptr);
  ASSERT_EQ(dump->run_data()->size(), 4u);
  EXPECT_EQ(dump->run_data()->Get(0)->name()->str(), "Default");
  for (int i = 1; i <= 3; ++i) {
    const auto* run = dump->run_data()->Get(i);
    EXPECT_EQ(run->name()->str(), "Execute");
    EXPECT_EQ(run->events()->Get(0)->profile_event()->name()->str(), "native_call_add.out");
  }
}

TEST_F(ProfileCliTest, RunCapturesTheDebugBuffer) {
  const std::string etdp = path("linear.etdp");
  ToolResult r = run("run " + kFixtures + "/linear_constant_buffer.pte --fill ones --etdump " + etdp +
                     " --debug-buffer 4096");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(etdp + ".debug  (debug buffer, 144 of 4096 bytes used)"));
  const std::string bytes = read_file(etdp);
  const std::string debug = read_file(etdp + ".debug");
  const ::etdump::ETDump* dump = parse(bytes);
  ASSERT_NE(dump, nullptr);
  // x = ones: mul gives 3, add (also the program output) 3 * 1 + 2 = 5.
  std::vector<float> expected_per_event = {3, 5, 5};
  size_t k = 0;
  for (const auto* e : *dump->run_data()->Get(1)->events()) {
    if (e->debug_event() == nullptr) continue;
    ASSERT_LT(k, expected_per_event.size());
    const auto* tensor = e->debug_event()->debug_entry()->tensor();
    ASSERT_LE(static_cast<size_t>(tensor->offset()) + 16, debug.size());
    for (int i = 0; i < 4; ++i) {
      float v;
      std::memcpy(&v, debug.data() + tensor->offset() + 4 * i, 4);
      EXPECT_EQ(v, expected_per_event[k]);
    }
    ++k;
  }
  EXPECT_EQ(k, 3u);
}

TEST_F(ProfileCliTest, TooSmallDebugBufferFailsNamingTheSizeNeeded) {
  ToolResult r = run("run " + kFixtures + "/linear_constant_buffer.pte --etdump " + path("x.etdp") +
                     " --debug-buffer 8 --debug-buffer-path " + path("x.bin"));
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("debug buffer of 8 bytes is too small: 3 values were not "
                               "captured; the run needs 144 bytes (--debug-buffer 144)"));
  EXPECT_TRUE(fs::exists(path("x.bin")));
}

TEST_F(ProfileCliTest, TracingOptionsNeedEtdump) {
  ToolResult r = run("run " + kFixtures + "/add.pte --debug-buffer 64");
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("--debug-buffer needs --etdump FILE"));
}

TEST_F(ProfileCliTest, FullEventStorageFailsNamingTheCapacityNeeded) {
  ToolResult r = run("run " + kFixtures + "/add.pte --etdump " + path("a.etdp") + " --etdump-events 2");
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("storage for 2 events was full and 4 events were dropped "
                               "(rerun with --etdump-events 6 or more)"));
}

TEST_F(ProfileCliTest, ProfileListsEachOperatorOfAPortableProgram) {
  ToolResult r = run("profile " + kFixtures + "/linear_constant_buffer.pte --repeat 4");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("operator"));
  EXPECT_THAT(r.out, HasSubstr("% exec"));
  EXPECT_THAT(r.out, testing::ContainsRegex("\naten::mul.out +1 "));
  EXPECT_THAT(r.out, testing::ContainsRegex("\naten::add.out +1 "));
  EXPECT_THAT(r.out, HasSubstr("(4 runs, Method::execute)"));
  EXPECT_THAT(r.out, testing::ContainsRegex("\nload +[0-9.]+ ms"));
  EXPECT_EQ(r.out.find("output 0"), std::string::npos);  // No outputs, only timing.
}

TEST_F(ProfileCliTest, ProfileShowsXnnpackOperatorsUnderTheirDelegateCall) {
  ToolResult r = run("profile " + kFixtures + "/mlp_xnnpack.pte --repeat 3 --threads 1");
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  bool seen_call = false;
  int nested = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("DELEGATE_CALL XnnpackBackend @0", 0) == 0) seen_call = true;
    if (seen_call && line.rfind("  ", 0) == 0 && line.find(" #") != std::string::npos) ++nested;
  }
  EXPECT_TRUE(seen_call) << r.out;
  EXPECT_GE(nested, 2) << r.out;  // Two linears (and the ReLU, unless fused).
  EXPECT_THAT(r.out, HasSubstr("(3 runs, Method::execute)"));
}

TEST_F(ProfileCliTest, ProfileBadOptions) {
  ToolResult r = run("profile " + kFixtures + "/add.pte --threads 0");
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("--threads"));
  r = run("profile");
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("profile takes exactly one MODEL.pte"));
}

// The table from records made by hand: counts per run, percentiles, shares.
TEST(ProfileTableTest, AggregatesCallsAndNestsDelegateEvents) {
  using etdump::EtdumpRecord;
  using etdump::RecordKind;
  std::vector<EtdumpRecord> records;
  auto block = [&](const char* name) {
    EtdumpRecord r;
    r.kind = RecordKind::kBlock;
    r.name = name;
    records.push_back(r);
  };
  auto profile = [&](const char* name, int32_t instruction, uint64_t start_ns, uint64_t end_ns) {
    EtdumpRecord r;
    r.name = name;
    r.instruction_id = instruction;
    r.span.start_time = start_ns;
    r.span.end_time = end_ns;
    records.push_back(r);
    return &records.back();
  };
  block("Default");
  profile("Program::load_method", -1, 0, 2000000);
  // Two runs of 10 ms: conv twice (1, 3 ms; then 2, 4 ms), then a delegate
  // call of 2 ms with one operator of 1.5 ms.
  for (int run = 0; run < 2; ++run) {
    block("Execute");
    profile("aten::convolution.out", 0, 0, (1 + run) * 1000000)->native_call = true;
    profile("aten::convolution.out", 1, 0, (3 + run) * 1000000)->native_call = true;
    EtdumpRecord* op = profile(nullptr, 2, 0, 1500000);
    op->delegate_id_str = "Convolution (NHWC, F32) #1";
    EtdumpRecord* call = profile("DELEGATE_CALL", 2, 0, 2000000);
    call->instruction_name = "XnnpackBackend";
    profile("Method::execute", -1, 0, 10000000);
  }
  ProfileTable table = build_profile_table({records.data(), records.size()});
  EXPECT_EQ(table.runs, 2u);
  EXPECT_DOUBLE_EQ(table.load_ms, 2.0);
  ASSERT_EQ(table.execute_ms.size(), 2u);
  ASSERT_EQ(table.rows.size(), 3u);
  const ProfileRow& conv = table.rows[0];
  EXPECT_EQ(conv.name, "aten::convolution.out");
  EXPECT_DOUBLE_EQ(conv.calls_per_run, 2);
  EXPECT_DOUBLE_EQ(conv.min_ms, 1);
  EXPECT_DOUBLE_EQ(conv.max_ms, 4);
  EXPECT_DOUBLE_EQ(conv.avg_ms, 2.5);
  EXPECT_DOUBLE_EQ(conv.p50_ms, 2.5);  // Between 2 and 3, as numpy.
  EXPECT_DOUBLE_EQ(conv.percent, 50);  // 10 of 20 ms.
  EXPECT_EQ(table.rows[1].name, "DELEGATE_CALL XnnpackBackend @2");
  EXPECT_EQ(table.rows[1].depth, 0);
  EXPECT_DOUBLE_EQ(table.rows[1].percent, 20);
  EXPECT_EQ(table.rows[2].name, "Convolution (NHWC, F32) #1");
  EXPECT_EQ(table.rows[2].depth, 1);
  EXPECT_DOUBLE_EQ(table.rows[2].avg_ms, 1.5);
  const std::string text = format_profile_table(table);
  EXPECT_THAT(text, HasSubstr("\n  Convolution (NHWC, F32) #1"));
}

}  // namespace
}  // namespace cli
}  // namespace torchlight
