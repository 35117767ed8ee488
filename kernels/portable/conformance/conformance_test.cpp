// Runs every conformance case (generated from PyTorch by generate.py) through
// the kernel registry, one gtest test per case, named <op>.<index>_<case>.
//
//   torchlight_conformance_test [gtest flags] [--cases DIR]
//
// DIR (default: $TORCHLIGHT_CONFORMANCE_CASES) holds manifest.json and the
// .npy files. A case whose operator has no kernel fails; a kernel that
// crashes the process is named on stderr.
#include <unistd.h>

#include <cctype>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/all_kernels.h"
#include "kernels/portable/conformance/conformance_case.h"

namespace torchlight::conformance {
namespace {

std::string sanitize(const std::string& text, size_t max_length) {
  std::string out;
  for (char c : text) {
    if (out.size() == max_length) break;
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) != 0;
    if (keep) {
      out += c;
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

class ConformanceCase : public ::testing::Test {
 public:
  ConformanceCase(const CaseSpec* spec, const Manifest* manifest)
      : spec_(spec), manifest_(manifest) {}

  void TestBody() override {
    Result<const KernelRegistry*> registry = all_kernels();
    ASSERT_TRUE(registry.ok()) << registry.status().message();
    const std::string failures = run_case(*spec_, {manifest_->tensors.data(), manifest_->tensors.size()},
                                             *registry.get());
    if (!failures.empty()) {
      ADD_FAILURE() << "case " << spec_->id << " (cases/" << spec_->module << ".py):\n"
                    << failures;
    }
  }

 private:
  const CaseSpec* spec_;
  const Manifest* manifest_;
};

// The case running now, so a kernel that crashes the process is named.
const char* g_current_case = nullptr;

class CurrentCaseListener : public ::testing::EmptyTestEventListener {
 public:
  void OnTestStart(const ::testing::TestInfo& info) override { g_current_case = info.value_param(); }
  void OnTestEnd(const ::testing::TestInfo&) override { g_current_case = nullptr; }
};

void report_crash(int signal_number) {
  // Only async-signal-safe calls here.
  if (g_current_case != nullptr) {
    const char prefix[] = "\nconformance: the process died (signal) in case ";
    ssize_t ignored = write(2, prefix, sizeof(prefix) - 1);
    ignored = write(2, g_current_case, std::strlen(g_current_case));
    ignored = write(2, "\n", 1);
    (void)ignored;
  }
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

}  // namespace
}  // namespace torchlight::conformance

int main(int argc, char** argv) {
  using torchlight::conformance::CaseSpec;
  ::testing::InitGoogleTest(&argc, argv);
  static std::string dir;
  if (const char* env = std::getenv("TORCHLIGHT_CONFORMANCE_CASES")) dir = env;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--cases") == 0 && i + 1 < argc) dir = argv[++i];
  }
  if (dir.empty()) {
    std::cerr << "usage: " << argv[0] << " [gtest flags] --cases DIR "
              << "(or TORCHLIGHT_CONFORMANCE_CASES=DIR); DIR comes from "
              << "python3 kernels/portable/conformance/generate.py DIR\n";
    return 2;
  }
  static torchlight::conformance::Manifest manifest;
  std::string error;
  if (!torchlight::conformance::load_manifest(dir, &manifest, &error)) {
    std::cerr << "conformance: " << error << "\n";
    return 1;
  }
  const std::vector<CaseSpec>& cases = manifest.cases;
  if (cases.empty()) {
    std::cerr << "conformance: " << dir << "/manifest.json has no cases\n";
    return 1;
  }
  std::set<std::string> ops;
  size_t error_cases = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const CaseSpec* spec = &cases[i];
    ops.insert(spec->op);
    error_cases += spec->expect_error ? 1 : 0;
    char index[32];
    std::snprintf(index, sizeof(index), "%05zu_", i);
    const std::string suite = torchlight::conformance::sanitize(spec->op, 80);
    const std::string name =
        index + torchlight::conformance::sanitize(spec->id.substr(spec->op.size()), 100);
    ::testing::RegisterTest(suite.c_str(), name.c_str(), nullptr, spec->id.c_str(), __FILE__,
                            __LINE__, [spec]() -> ::testing::Test* {
                              return new torchlight::conformance::ConformanceCase(spec,
                                                                                  &manifest);
                            });
  }
  ::testing::UnitTest::GetInstance()->listeners().Append(
      new torchlight::conformance::CurrentCaseListener());
  for (int signal_number : {SIGABRT, SIGSEGV, SIGFPE, SIGBUS, SIGILL}) {
    std::signal(signal_number, torchlight::conformance::report_crash);
  }
  std::cout << "conformance: " << cases.size() << " cases, " << ops.size() << " ops ("
            << error_cases << " error cases) from " << dir << "\n";
  const int status = RUN_ALL_TESTS();
  const ::testing::UnitTest* unit = ::testing::UnitTest::GetInstance();
  std::cout << "conformance: " << unit->successful_test_count() << " of "
            << unit->test_to_run_count() << " cases passed, " << unit->failed_test_count()
            << " failed\n";
  return status;
}
