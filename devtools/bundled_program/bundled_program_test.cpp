// BundledProgram and BundledRunner on .bpte files written by our Python
// writer (testdata/, see make_testdata.py) and on corrupt variants of them.
#include "devtools/bundled_program/bundled_program.h"

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "devtools/bundled_program/bundled_runner.h"
#include "kernels/all_kernels.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight {
namespace bundled {
namespace {

using testing::ErrorIs;

std::string testdata(const char* name) { return std::string(TORCHLIGHT_BUNDLED_TESTDATA "/") + name; }

AlignedBytes read(const char* name) {
  Result<AlignedBytes> bytes = AlignedBytes::read_file(testdata(name));
  EXPECT_TRUE(bytes.ok()) << bytes.status().message();
  return bytes.ok() ? std::move(bytes.get()) : AlignedBytes();
}

const KernelRegistry& kernels() {
  Result<const KernelRegistry*> k = all_kernels();
  EXPECT_TRUE(k.ok());
  return *k.get();
}

Result<std::unique_ptr<BundledRunner>> open(AlignedBytes bytes, const char* name = "test.bpte") {
  return BundledRunner::open(std::move(bytes), name, kernels(), nullptr);
}

std::vector<uint8_t> file_bytes(const char* name) {
  AlignedBytes b = read(name);
  return {b.span().data(), b.span().data() + b.span().size()};
}

// Every case of every method; returns the failures' messages. Errors and
// mismatches both count, so a corrupt file only has to end cleanly.
std::vector<std::string> run_all(BundledRunner& runner) {
  std::vector<std::string> failures;
  const BundledProgram& bundle = runner.bundle();
  for (size_t m = 0; m < bundle.num_methods(); ++m) {
    const std::string method(bundle.method_name(m));
    Result<size_t> cases = bundle.num_test_cases(method);
    for (size_t i = 0; cases.ok() && i < cases.get(); ++i) {
      Result<CaseReport> r = runner.run_case(method, i, kDefaultRtol, kDefaultAtol);
      if (!r.ok()) {
        failures.push_back(r.status().message());
      } else if (!r.get().passed) {
        failures.push_back(r.get().mismatch.message());
      }
    }
  }
  return failures;
}

TEST(BundledProgram, OurWriterFileHasItsSuitesAndAnAlignedProgram) {
  AlignedBytes bytes = read("add_mul.bpte");
  ASSERT_TRUE(is_bundled_program(bytes.span()));
  Result<BundledProgram> bundle = BundledProgram::parse(bytes.span(), "add_mul.bpte");
  ASSERT_TRUE(bundle.ok()) << bundle.status().message();
  ASSERT_EQ(bundle->num_methods(), 1u);
  EXPECT_EQ(bundle->method_name(0), "forward");
  ASSERT_TRUE(bundle->num_test_cases("forward").ok());
  EXPECT_EQ(bundle->num_test_cases("forward").get(), 10u);
  EXPECT_TRUE(bundle->is_program_aligned());
  Span<const uint8_t> program = bundle->program_data();
  ASSERT_GE(program.size(), 8u);
  EXPECT_EQ(std::memcmp(program.data() + 4, "ET12", 4), 0);
  EXPECT_EQ((program.data() - bytes.span().data()) % 32, 0);
  for (size_t i = 0; i < 10; ++i) EXPECT_TRUE(bundle->check_test_case("forward", i).ok());
  EXPECT_THAT(bundle->num_test_cases("backward"),
              ErrorIs(Error::kNotFound, "no test suite for method 'backward'"));
  EXPECT_THAT(bundle->check_test_case("forward", 10),
              ErrorIs(Error::kInvalidArgument, "has 10 test cases; case 10 is out of range"));
}

TEST(BundledRunner, EveryCaseOfTheIntModelPassesExactly) {
  auto runner = open(read("add_mul.bpte"));
  ASSERT_TRUE(runner.ok()) << runner.status().message();
  EXPECT_FALSE(runner.get()->program_copied());
  for (size_t i = 0; i < 10; ++i) {
    Result<CaseReport> r = runner.get()->run_case("forward", i, 0, 0);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_TRUE(r->passed) << r->mismatch.message();
    EXPECT_EQ(r->stats.max_abs_error, 0.0);
    EXPECT_EQ(r->stats.elements, 4);
  }
}

TEST(BundledRunner, FloatModelPassesWithinUpstreamsDefaultTolerance) {
  auto runner = open(read("linear.bpte"));
  ASSERT_TRUE(runner.ok()) << runner.status().message();
  for (size_t i = 0; i < 4; ++i) {
    Result<CaseReport> r = runner.get()->run_case("forward", i, kDefaultRtol, kDefaultAtol);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_TRUE(r->passed) << r->mismatch.message();
    EXPECT_LT(r->stats.max_abs_error, 1e-5);
    EXPECT_EQ(r->stats.elements, 6);
  }
}

TEST(BundledRunner, WrongExpectedOutputFailsNamingMethodCaseOutputAndElement) {
  auto runner = open(read("add_mul_wrong.bpte"));
  ASSERT_TRUE(runner.ok()) << runner.status().message();
  for (size_t i = 0; i < 10; ++i) {
    Result<CaseReport> r = runner.get()->run_case("forward", i, kDefaultRtol, kDefaultAtol);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->passed, i != 3) << "case " << i;
    if (i == 3) {
      EXPECT_THAT(r->mismatch, ErrorIs(Error::kInvalidArgument,
                                       "method 'forward' test case 3 output 0: element 2 is"));
      EXPECT_EQ(r->stats.max_abs_error, 1.0);
    }
  }
}

TEST(BundledRunner, InputCountMismatchIsAnErrorNamingTheCase) {
  auto runner = open(read("bad_input_count.bpte"));
  ASSERT_TRUE(runner.ok()) << runner.status().message();
  EXPECT_TRUE(runner.get()->run_case("forward", 0, kDefaultRtol, kDefaultAtol).ok());
  EXPECT_THAT(runner.get()->run_case("forward", 1, kDefaultRtol, kDefaultAtol),
              ErrorIs(Error::kInvalidArgument,
                      "method 'forward' test case 1 has 1 inputs, but the method takes 2"));
}

TEST(BundledProgram, APteOrAnEmptyFileIsNotABundle) {
  std::vector<uint8_t> file = file_bytes("add_mul.bpte");
  std::memcpy(file.data() + 4, "ET12", 4);
  auto copy = AlignedBytes::copy_of({file.data(), file.size()});
  ASSERT_TRUE(copy.ok());
  EXPECT_THAT(BundledProgram::parse(copy->span(), "x.pte"),
              ErrorIs(Error::kInvalidProgram,
                      "x.pte: not a bundled program: identifier is 'ET12', expected 'BP08'"));
  EXPECT_THAT(BundledProgram::parse({file.data(), 3}, "tiny"),
              ErrorIs(Error::kInvalidProgram, "3 bytes is too short"));
}

TEST(BundledProgram, ProgramAlignmentIsReportedFromTheAddress) {
  // The same bytes 8 past a 64-byte boundary: the flatbuffer is still
  // 8-aligned for the verifier, the program no longer 32-aligned.
  std::vector<uint8_t> file = file_bytes("add_mul.bpte");
  std::vector<uint8_t> shifted(file.size() + 8);
  auto storage = AlignedBytes::copy_of({shifted.data(), shifted.size()});
  ASSERT_TRUE(storage.ok());
  auto* base = const_cast<uint8_t*>(storage->span().data());
  std::memcpy(base + 8, file.data(), file.size());
  Result<BundledProgram> bundle = BundledProgram::parse({base + 8, file.size()}, "shifted");
  ASSERT_TRUE(bundle.ok()) << bundle.status().message();
  EXPECT_FALSE(bundle->is_program_aligned());
}

TEST(BundledRunner, EveryTruncationIsACleanError) {
  const std::vector<uint8_t> file = file_bytes("add_mul.bpte");
  for (size_t length = 0; length < file.size(); ++length) {
    auto cut = AlignedBytes::copy_of({file.data(), length});
    ASSERT_TRUE(cut.ok());
    auto runner = open(std::move(cut.get()));
    EXPECT_THAT(runner, ErrorIs(Error::kInvalidProgram)) << "cut at " << length;
  }
}

TEST(BundledRunner, FlippedBytesEndCleanly) {
  // Every byte outside the embedded program (whose own corruption the .pte
  // loader's tests cover), flipped three ways; then every case is run.
  const std::vector<uint8_t> file = file_bytes("add_mul.bpte");
  Span<const uint8_t> program;
  {
    auto copy = AlignedBytes::copy_of({file.data(), file.size()});
    ASSERT_TRUE(copy.ok());
    Result<BundledProgram> bundle = BundledProgram::parse(copy->span(), "add_mul.bpte");
    ASSERT_TRUE(bundle.ok());
    const size_t start = static_cast<size_t>(bundle->program_data().data() - copy->span().data());
    program = {file.data() + start, bundle->program_data().size()};
  }
  size_t opened = 0;
  for (size_t pos = 0; pos < file.size(); ++pos) {
    if (file.data() + pos >= program.data() && file.data() + pos < program.end()) continue;
    for (uint8_t flip : {0x01, 0x80, 0xff}) {
      std::vector<uint8_t> corrupt = file;
      corrupt[pos] ^= flip;
      auto bytes = AlignedBytes::copy_of({corrupt.data(), corrupt.size()});
      ASSERT_TRUE(bytes.ok());
      auto runner = open(std::move(bytes.get()));
      if (!runner.ok()) continue;
      ++opened;
      run_all(*runner.get());  // Must not crash or read out of bounds (asan).
    }
  }
  EXPECT_GT(opened, 0u);  // Flips in tensor data keep the file valid.
}

TEST(BundledRunner, CorruptStoredTensorsAreNamed) {
  // One stored tensor's sizes [2, 2] become [3, 2]: 6 int32 elements over
  // its 16 bytes. The writer puts the test values after the program, so the
  // first [2, 2] sizes vector (length 2, then 2, 2) past it is a stored one.
  std::vector<uint8_t> file = file_bytes("add_mul.bpte");
  size_t program_end = 0;
  {
    auto copy = AlignedBytes::copy_of({file.data(), file.size()});
    ASSERT_TRUE(copy.ok());
    Result<BundledProgram> bundle = BundledProgram::parse(copy->span(), "add_mul.bpte");
    ASSERT_TRUE(bundle.ok());
    program_end = static_cast<size_t>(bundle->program_data().end() - copy->span().data());
  }
  const uint8_t pattern[] = {2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0};
  size_t found = 0;
  for (size_t i = program_end; found == 0 && i + sizeof(pattern) <= file.size(); ++i) {
    if (std::memcmp(file.data() + i, pattern, sizeof(pattern)) == 0) found = i;
  }
  ASSERT_NE(found, 0u);
  file[found + 4] = 3;
  auto bytes = AlignedBytes::copy_of({file.data(), file.size()});
  ASSERT_TRUE(bytes.ok());
  auto runner = open(std::move(bytes.get()), "sizes.bpte");
  ASSERT_TRUE(runner.ok()) << runner.status().message();
  std::vector<std::string> failures = run_all(*runner.get());
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(failures[0].find("16 bytes of data, but int32 sizes [3, 2] need 6 elements"),
            std::string::npos)
      << failures[0];
  EXPECT_NE(failures[0].find("sizes.bpte: method 'forward' test case"), std::string::npos)
      << failures[0];
}

}  // namespace
}  // namespace bundled
}  // namespace torchlight
