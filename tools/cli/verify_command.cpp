#include "tools/cli/verify_command.h"

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "devtools/bundled_program/bundled_runner.h"
#include "extension/module/default_backends.h"
#include "kernels/all_kernels.h"
#include "tools/cli/arg_parser.h"
#include "tools/cli/cli_report.h"

namespace torchlight {
namespace cli {
namespace {

const char kUsage[] =
    "usage: torchlight verify FILE.bpte [--rtol R] [--atol A]\n"
    "\n"
    "Runs every test case of a bundled program (a .pte with test inputs and\n"
    "expected outputs) and compares each output with the expected one:\n"
    "float32/float64/float16 elementwise within |actual - expected| <= atol +\n"
    "rtol x |actual| (NaN matches NaN, infinities match by sign), other dtypes\n"
    "exactly. Prints one line per case and a summary.\n"
    "\n"
    "options:\n"
    "  --rtol R   relative tolerance (default 1e-05)\n"
    "  --atol A   absolute tolerance (default 1e-08)\n"
    "\n"
    "Exit status: 0 when every case passes, 1 when a case fails or the file\n"
    "cannot be used.\n";

struct FailedCase {
  std::string method;
  size_t index;
};

}  // namespace

const char* verify_usage() { return kUsage; }

int verify_command(const std::vector<std::string>& args) {
  ArgParser parser("verify", {{"rtol"}, {"atol"}});
  Status parsed = parser.parse(args);
  if (!parsed.ok()) return report_error("", parsed);
  if (parser.help_requested()) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (parser.positionals().size() != 1) {
    return report_error("", "verify: expected one FILE.bpte (see 'torchlight verify --help')");
  }
  const std::string path = parser.positionals()[0];
  double rtol = bundled::kDefaultRtol;
  double atol = bundled::kDefaultAtol;
  if (parser.has("rtol")) {
    Result<double> r = parse_double_option("rtol", parser.value("rtol", ""), 0.0, 1e9);
    if (!r.ok()) return report_error("", r.status());
    rtol = r.get();
  }
  if (parser.has("atol")) {
    Result<double> a = parse_double_option("atol", parser.value("atol", ""), 0.0, 1e300);
    if (!a.ok()) return report_error("", a.status());
    atol = a.get();
  }

  Result<const KernelRegistry*> kernels = all_kernels();
  if (!kernels.ok()) return report_error("", kernels.status());
  Result<bundled::AlignedBytes> file = bundled::AlignedBytes::read_file(path);
  if (!file.ok()) return report_error(path, file.status());
  Result<std::unique_ptr<bundled::BundledRunner>> opened = bundled::BundledRunner::open(
      std::move(file.get()), path, *kernels.get(), default_backends());
  if (!opened.ok()) return report_error(path, opened.status());
  bundled::BundledRunner& runner = *opened.get();
  const bundled::BundledProgram& bundle = runner.bundle();

  std::printf("%s: %zu method%s with test cases; rtol %g, atol %g%s\n", path.c_str(),
              bundle.num_methods(), bundle.num_methods() == 1 ? "" : "s", rtol, atol,
              runner.program_copied() ? " (program copied: it was not 32-byte aligned)" : "");
  std::vector<FailedCase> failed;
  size_t total = 0;
  for (size_t m = 0; m < bundle.num_methods(); ++m) {
    const std::string method = std::string(bundle.method_name(m));
    Result<size_t> cases = bundle.num_test_cases(method);
    const size_t n = cases.ok() ? cases.get() : 0;
    for (size_t i = 0; i < n; ++i) {
      ++total;
      Result<bundled::CaseReport> report = runner.run_case(method, i, rtol, atol);
      if (!report.ok()) {
        std::printf("FAIL  %s  case %zu  error: %s\n", method.c_str(), i,
                    report.status().message());
        failed.push_back({method, i});
        continue;
      }
      const bundled::CaseReport& r = report.get();
      // Quantized and other non-numeric dtypes compare bitwise only.
      char error[96] = "max abs error n/a";
      if (r.stats.numeric) {
        std::snprintf(error, sizeof(error), "max abs error %.3g, max rel error %.3g",
                      r.stats.max_abs_error, r.stats.max_rel_error);
      }
      if (r.passed) {
        std::printf("PASS  %s  case %zu  %s\n", method.c_str(), i, error);
      } else {
        std::printf("FAIL  %s  case %zu  %s  (%s)\n", method.c_str(), i, error,
                    r.mismatch.message());
        failed.push_back({method, i});
      }
    }
  }
  std::printf("%zu of %zu test cases passed\n", total - failed.size(), total);
  if (failed.empty()) return 0;
  std::string names;
  for (size_t k = 0; k < failed.size(); ++k) {
    if (k == 8) {
      names += ", ... (" + std::to_string(failed.size() - k) + " more)";
      break;
    }
    names += (k == 0 ? "" : ", ") + std::string("method '") + failed[k].method + "' case " +
             std::to_string(failed[k].index);
  }
  return report_error(path, std::to_string(failed.size()) + " test case" +
                                (failed.size() == 1 ? "" : "s") + " failed: " + names);
}

}  // namespace cli
}  // namespace torchlight
