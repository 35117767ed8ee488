// End-to-end tests of the `torchlight` binary on the reference fixtures:
// each test spawns the built tool and checks its exit status, stdout,
// stderr and the files it writes.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "extension/npy/npy.h"
#include "extension/tensor/owned_tensor.h"
#include "runtime/executor/testing/pte_builder.h"

namespace torchlight {
namespace {

namespace fs = std::filesystem;

const std::string kFixtures = TORCHLIGHT_FIXTURES_DIR;
const std::string kAdd = kFixtures + "/add.pte";
const std::string kAddEh = kFixtures + "/add_eh.pte";
const std::string kLinear = kFixtures + "/linear_constant_buffer.pte";

struct CliResult {
  bool exited = false;  // False when the tool died from a signal.
  int status = -1;      // Exit status when `exited`.
  std::string out;
  std::string err;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// `text` with every run of spaces collapsed to one, so checks do not depend
// on column alignment.
std::string squeeze(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == ' ' && !out.empty() && out.back() == ' ') continue;
    out += c;
  }
  return out;
}

size_t count_lines(const std::string& text) {
  size_t lines = 0;
  for (char c : text) lines += c == '\n';
  return lines;
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/torchlight_cli_test_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  // Runs the tool with `args`, in `cwd` when given; stdout and stderr go to
  // files in the temp dir, so a chatty child can never block on a pipe.
  CliResult run(const std::vector<std::string>& args, const std::string& cwd = "") {
    const std::string out_path = path("stdout.txt");
    const std::string err_path = path("stderr.txt");
    std::vector<std::string> argv_storage = {TORCHLIGHT_CLI_PATH};
    argv_storage.insert(argv_storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& arg : argv_storage) argv.push_back(arg.data());
    argv.push_back(nullptr);

    const pid_t pid = ::fork();
    if (pid == 0) {
      const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (out < 0 || err < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) ::_exit(127);
      if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(127);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    CliResult result;
    int status = 0;
    EXPECT_GT(pid, 0);
    EXPECT_EQ(::waitpid(pid, &status, 0), pid);
    result.exited = WIFEXITED(status);
    result.status = result.exited ? WEXITSTATUS(status) : -1;
    result.out = read_text(out_path);
    result.err = read_text(err_path);
    return result;
  }

  // Writes a float32 .npy of `sizes` holding `values`.
  std::string write_floats(const std::string& name, std::vector<SizesType> sizes,
                           const std::vector<float>& values) {
    Result<OwnedTensor> t = OwnedTensor::from_values<float>(std::move(sizes), values);
    EXPECT_TRUE(t.ok()) << t.status().message();
    const std::string file = path(name);
    Status s = write_npy(file, t->tensor());
    EXPECT_TRUE(s.ok()) << s.message();
    return file;
  }

  // Reads a float32 .npy written by the tool.
  std::vector<float> read_floats(const std::string& file, std::vector<SizesType> expected_sizes) {
    Result<OwnedTensor> t = read_npy(file);
    EXPECT_TRUE(t.ok()) << t.status().message();
    if (!t.ok()) return {};
    EXPECT_EQ(t->scalar_type(), ScalarType::kFloat);
    EXPECT_EQ(std::vector<SizesType>(t->sizes().begin(), t->sizes().end()), expected_sizes);
    const float* data = t->data<float>();
    return std::vector<float>(data, data + t->numel());
  }

  // The contract for every failure: a normal exit with status 1 and one
  // stderr line "error: ..." that names `file` (when given).
  void expect_failure(const CliResult& r, const std::string& file) {
    EXPECT_TRUE(r.exited) << "killed by a signal; stderr: " << r.err;
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    EXPECT_EQ(count_lines(r.err), 1u) << r.err;
    if (!file.empty()) {
      EXPECT_NE(r.err.find(file), std::string::npos) << r.err;
    }
  }

  std::string dir_;
};

// --- Running the fixtures ----------------------------------------------------

TEST_F(CliTest, AddPrintsAndWritesTheSum) {
  const std::string a = write_floats("a.npy", {1}, {1.5f});
  const std::string b = write_floats("b.npy", {1}, {2.25f});
  const std::string out_dir = path("out");
  CliResult r = run({"run", kAdd, "--input", a, "--input", b, "--output-dir", out_dir});
  ASSERT_TRUE(r.exited);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(squeeze(r.out).find("output 0 float32 [1] = [3.75]"), std::string::npos) << r.out;
  EXPECT_NE(squeeze(r.out).find("load "), std::string::npos) << r.out;
  EXPECT_NE(squeeze(r.out).find("median"), std::string::npos) << r.out;
  EXPECT_EQ(read_floats(out_dir + "/output0.npy", {1}), std::vector<float>({3.75f}));
  EXPECT_FALSE(fs::exists(out_dir + "/output1.npy"));
}

TEST_F(CliTest, AddEhAddsOne) {
  const std::string x = write_floats("x.npy", {3}, {1, 2, 3});
  const std::string out_dir = path("nested/out");  // Created, parents too.
  CliResult r = run({"run", kAddEh, "--input", x, "--output-dir", out_dir, "--repeat", "3"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(squeeze(r.out).find("[2, 3, 4]"), std::string::npos) << r.out;
  EXPECT_NE(squeeze(r.out).find("(3 runs)"), std::string::npos) << r.out;
  EXPECT_EQ(read_floats(out_dir + "/output0.npy", {3}), std::vector<float>({2, 3, 4}));
}

TEST_F(CliTest, LinearIsThreeXPlusTwoOnEveryRepeat) {
  // The output reuses the input's planned slot: without setting the inputs
  // again before each run, run 2 would compute 3(3x+2)+2.
  const std::string x = write_floats("x.npy", {2, 2}, {1, 2, 3, 4});
  const std::string out_dir = path("out");
  CliResult r = run({"run", kLinear, "--input=" + x, "--output-dir=" + out_dir, "--repeat=20"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(squeeze(r.out).find("float32 [2, 2] = [5, 8, 11, 14]"), std::string::npos) << r.out;
  EXPECT_NE(squeeze(r.out).find("(20 runs)"), std::string::npos) << r.out;
  EXPECT_EQ(read_floats(out_dir + "/output0.npy", {2, 2}), std::vector<float>({5, 8, 11, 14}));
}

TEST_F(CliTest, GeneratedInputs) {
  CliResult ones = run({"run", kAdd, "--fill", "ones", "--output-dir", path("ones")});
  ASSERT_EQ(ones.status, 0) << ones.err;
  EXPECT_NE(ones.out.find("ones"), std::string::npos) << ones.out;
  EXPECT_EQ(read_floats(path("ones/output0.npy"), {1}), std::vector<float>({2}));

  CliResult zeros = run({"run", kAddEh, "--fill", "zeros", "--output-dir", path("zeros")});
  ASSERT_EQ(zeros.status, 0) << zeros.err;
  EXPECT_EQ(read_floats(path("zeros/output0.npy"), {3}), std::vector<float>({1, 1, 1}));

  // Random is the default and is reproducible from the seed.
  ASSERT_EQ(run({"run", kAddEh, "--seed", "7", "--output-dir", path("r1")}).status, 0);
  ASSERT_EQ(run({"run", kAddEh, "--seed", "7", "--output-dir", path("r2")}).status, 0);
  ASSERT_EQ(run({"run", kAddEh, "--seed", "8", "--output-dir", path("r3")}).status, 0);
  const std::vector<float> r1 = read_floats(path("r1/output0.npy"), {3});
  EXPECT_EQ(r1, read_floats(path("r2/output0.npy"), {3}));
  EXPECT_NE(r1, read_floats(path("r3/output0.npy"), {3}));
  for (float v : r1) {  // x in [-1, 1), so x + 1 in [0, 2).
    EXPECT_GE(v, 0.0f);
    EXPECT_LT(v, 2.0f);
  }
}

TEST_F(CliTest, NoOutputDirWritesNothing) {
  CliResult r = run({"run", kAdd, "--load-mode", "file", "--method", "forward"}, dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(squeeze(r.out).find("load mode file"), std::string::npos) << r.out;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().extension(), ".txt") << entry.path();
  }
}

// --- inspect -----------------------------------------------------------------

TEST_F(CliTest, InspectAdd) {
  CliResult r = run({"inspect", kAdd});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(squeeze(r.out).find("method forward"), std::string::npos) << r.out;
  EXPECT_NE(squeeze(r.out).find("aten::add.out"), std::string::npos) << r.out;
  EXPECT_NE(squeeze(r.out).find("Tensor"), std::string::npos) << r.out;
  EXPECT_NE(squeeze(r.out).find("float32 [1]"), std::string::npos) << r.out;
  EXPECT_NE(squeeze(r.out).find("extended header none"), std::string::npos) << r.out;
  EXPECT_NE(squeeze(r.out).find("planned memory 48 bytes in 1 buffer"), std::string::npos) << r.out;
  EXPECT_NE(squeeze(r.out).find("delegates none"), std::string::npos) << r.out;
}

TEST_F(CliTest, InspectAddEhShowsHeaderAndSegment) {
  CliResult r = run({"inspect", kAddEh});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(squeeze(r.out).find("eh00"), std::string::npos) << r.out;
  EXPECT_NE(squeeze(r.out).find("segment 0"), std::string::npos) << r.out;
  EXPECT_NE(squeeze(r.out).find("(constant segment)"), std::string::npos) << r.out;
  EXPECT_NE(squeeze(r.out).find("float32 [3]"), std::string::npos) << r.out;
  EXPECT_NE(squeeze(r.out).find("32 bytes in 1 buffer"), std::string::npos) << r.out;
}

TEST_F(CliTest, InspectLinearShowsBothOperatorsAndLegacyConstants) {
  CliResult r = run({"inspect", kLinear});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(squeeze(r.out).find("aten::mul.out"), std::string::npos) << r.out;
  EXPECT_NE(squeeze(r.out).find("aten::add.out"), std::string::npos) << r.out;
  EXPECT_NE(squeeze(r.out).find("legacy inline constant_buffer"), std::string::npos) << r.out;
  EXPECT_NE(squeeze(r.out).find("float32 [2, 2]"), std::string::npos) << r.out;
  EXPECT_NE(squeeze(r.out).find("segments 0"), std::string::npos) << r.out;
}

// --- Help ----------------------------------------------------------------------

TEST_F(CliTest, Help) {
  CliResult top = run({"--help"});
  EXPECT_EQ(top.status, 0);
  EXPECT_NE(top.out.find("run MODEL.pte"), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("inspect MODEL.pte"), std::string::npos) << top.out;
  CliResult run_help = run({"run", "--help"});
  EXPECT_EQ(run_help.status, 0);
  for (const char* option : {"--method", "--input", "--output-dir", "--repeat", "--fill",
                             "--seed", "--load-mode"}) {
    EXPECT_NE(run_help.out.find(option), std::string::npos) << option;
  }
  CliResult inspect_help = run({"inspect", "-h"});
  EXPECT_EQ(inspect_help.status, 0);
  EXPECT_NE(inspect_help.out.find("usage: torchlight inspect"), std::string::npos);
}

// --- Failures: exit 1, one "error:" line naming the file -------------------------

TEST_F(CliTest, MissingModel) {
  const std::string missing = path("nope.pte");
  expect_failure(run({"run", missing}), missing);
  expect_failure(run({"inspect", missing}), missing);
}

TEST_F(CliTest, TruncatedModel) {
  const std::string bytes = read_text(kAddEh);
  ASSERT_GT(bytes.size(), 20u);
  const std::string truncated = path("truncated.pte");
  std::ofstream(truncated, std::ios::binary) << bytes.substr(0, 20);
  expect_failure(run({"run", truncated}), truncated);
  expect_failure(run({"inspect", truncated}), truncated);
}

TEST_F(CliTest, GarbageModel) {
  const std::string garbage = path("garbage.pte");
  std::ofstream(garbage, std::ios::binary) << std::string(4096, '\x5a');
  expect_failure(run({"run", garbage}), garbage);
  expect_failure(run({"inspect", garbage}), garbage);
}

// A union with its type set and its table missing (issue 9): inspect and
// run name the file and the value or instruction instead of crashing.
TEST_F(CliTest, UnionWithoutItsTable) {
  const std::vector<uint8_t> hollow_value = testing::program_with_hollow_union(
      fb::KernelTypes::Tensor, fb::InstructionArguments::NONE);
  const std::vector<uint8_t> hollow_instruction = testing::program_with_hollow_union(
      fb::KernelTypes::NONE, fb::InstructionArguments::KernelCall);
  const std::pair<const std::vector<uint8_t>*, const char*> cases[] = {
      {&hollow_value, "value 1 has type Tensor but no value data"},
      {&hollow_instruction, "instruction 0 is a KernelCall with no arguments table"}};
  for (const auto& [bytes, why] : cases) {
    const std::string file = path("hollow.pte");
    std::ofstream(file, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes->data()), static_cast<std::streamsize>(bytes->size()));
    for (const char* command : {"inspect", "run"}) {
      CliResult r = run({command, file});
      expect_failure(r, file);
      EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
    }
  }
}

TEST_F(CliTest, WrongInputDtype) {
  Result<OwnedTensor> t = OwnedTensor::from_values<int64_t>({3}, {1, 2, 3});
  ASSERT_TRUE(t.ok());
  const std::string x = path("x_int64.npy");
  ASSERT_TRUE(write_npy(x, t->tensor()).ok());
  CliResult r = run({"run", kAddEh, "--input", x});
  expect_failure(r, x);
  EXPECT_NE(r.err.find("float32 [3]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("int64"), std::string::npos) << r.err;
}

TEST_F(CliTest, WrongInputShape) {
  const std::string x = write_floats("x4.npy", {4}, {1, 2, 3, 4});
  CliResult r = run({"run", kAddEh, "--input", x});
  expect_failure(r, x);
  EXPECT_NE(r.err.find("[4]"), std::string::npos) << r.err;
}

TEST_F(CliTest, WrongInputCount) {
  const std::string a = write_floats("a.npy", {1}, {1.5f});
  CliResult r = run({"run", kAdd, "--input", a});
  expect_failure(r, "add.pte");
  EXPECT_NE(r.err.find("takes 2 inputs, but 1 was given"), std::string::npos) << r.err;
  expect_failure(run({"run", kAddEh, "--input", a, "--input", a}), "add_eh.pte");
}

TEST_F(CliTest, BadInputFiles) {
  const std::string missing = path("missing.npy");
  expect_failure(run({"run", kAddEh, "--input", missing}), missing);
  const std::string garbage = path("garbage.npy");
  std::ofstream(garbage, std::ios::binary) << "not an npy file at all";
  expect_failure(run({"run", kAddEh, "--input", garbage}), garbage);
  expect_failure(run({"run", kAddEh, "--input", "-"}), "add_eh.pte");
}

TEST_F(CliTest, UnwritableOutputDir) {
  const std::string blocker = path("file");
  std::ofstream(blocker) << "a file, not a directory";
  expect_failure(run({"run", kAdd, "--output-dir", blocker}), blocker);
}

TEST_F(CliTest, BadOptions) {
  expect_failure(run({"run", kAdd, "--repeat", "0"}), "--repeat");
  expect_failure(run({"run", kAdd, "--repeat", "abc"}), "--repeat");
  expect_failure(run({"run", kAdd, "--repeat"}), "--repeat");
  expect_failure(run({"run", kAdd, "--fill", "twos"}), "--fill");
  expect_failure(run({"run", kAdd, "--seed", "-3"}), "--seed");
  expect_failure(run({"run", kAdd, "--load-mode", "tape"}), "--load-mode");
  expect_failure(run({"run", kAdd, "--bogus"}), "--bogus");
  expect_failure(run({"run", kAdd, "--method", "backward"}), "backward");
  expect_failure(run({"run"}), "");
  expect_failure(run({"run", kAdd, kAddEh}), "");
  expect_failure(run({"inspect"}), "");
  expect_failure(run({"frobnicate"}), "frobnicate");
  expect_failure(run({}), "");
}

// --- llm: failures before any generation (generation itself is tested by
// python/tests/llm/test_llm_runner_cli.py on exported models) -------------------

TEST_F(CliTest, LlmHelp) {
  CliResult r = run({"llm", "--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("usage: torchlight llm"), std::string::npos) << r.out;
  EXPECT_NE(run({"--help"}).out.find("llm --model"), std::string::npos);
}

TEST_F(CliTest, LlmMissingModel) {
  const std::string missing = path("nope.pte");
  expect_failure(run({"llm", "--model", missing, "--tokenizer", "bytes", "--prompt", "a"}),
                 missing);
}

TEST_F(CliTest, LlmWrongProgramSignature) {
  CliResult r = run({"llm", "--model", kAdd, "--tokenizer", "bytes", "--prompt", "a"});
  expect_failure(r, kAdd);
  EXPECT_NE(r.err.find("tokens"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("int64"), std::string::npos) << r.err;
}

TEST_F(CliTest, LlmBadOptions) {
  expect_failure(run({"llm", "--prompt", "a"}), "--model");
  expect_failure(run({"llm", "--model", kAdd}), "--prompt");
  expect_failure(run({"llm", "--model", kAdd, "--prompt", "a", "--top-p", "2"}), "--top-p");
  expect_failure(run({"llm", "--model", kAdd, "--prompt", "a", "--stop", ""}), "--stop");
}

}  // namespace
}  // namespace torchlight
