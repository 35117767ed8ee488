// Fuzz target: .bpte bundled programs. BundledProgram::parse (identifier,
// flatbuffers verifier), check_test_case on every case, then BundledRunner:
// the embedded program's load, every method's load, every case's inputs,
// one execute and the output comparison. Bounds as program_runner.h's:
// 16 MiB of planned arenas per method, 10,000 instructions per execute.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "devtools/bundled_program/bundled_runner.h"
#include "kernels/all_kernels.h"

namespace {

constexpr uint64_t kPlannedMemoryLimit = 16u << 20;
constexpr uint64_t kMaxSteps = 10000;
// A verified file can list many cases; running each is the slow part.
constexpr size_t kMaxCasesRun = 64;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torchlight;
  using namespace torchlight::bundled;
  // The aligned copy is what a caller makes (AlignedBytes::read_file).
  Result<AlignedBytes> bytes = AlignedBytes::copy_of({data, size});
  if (!bytes.ok()) return 0;
  Result<BundledProgram> view = BundledProgram::parse(bytes.get().span(), "fuzz.bpte");
  if (!view.ok()) return 0;
  for (size_t m = 0; m < view->num_methods(); ++m) {
    const std::string method(view->method_name(m));
    Result<size_t> cases = view->num_test_cases(method);
    if (!cases.ok()) std::abort();  // The method was listed, so it must be found.
    for (size_t i = 0; i < cases.get() && i < kMaxCasesRun; ++i) {
      (void)view->check_test_case(method, i);
    }
  }

  Result<const KernelRegistry*> kernels = all_kernels();
  if (!kernels.ok()) std::abort();
  Result<std::unique_ptr<BundledRunner>> runner =
      BundledRunner::open(std::move(bytes.get()), "fuzz.bpte", *kernels.get(), nullptr);
  if (!runner.ok()) return 0;
  runner.get()->module().set_max_steps(kMaxSteps);
  runner.get()->module().set_planned_memory_limit(kPlannedMemoryLimit);
  const BundledProgram& bundle = runner.get()->bundle();
  size_t run = 0;
  for (size_t m = 0; m < bundle.num_methods(); ++m) {
    const std::string method(bundle.method_name(m));
    Result<size_t> cases = bundle.num_test_cases(method);
    for (size_t i = 0; cases.ok() && i < cases.get() && run < kMaxCasesRun; ++i, ++run) {
      (void)runner.get()->run_case(method, i, kDefaultRtol, kDefaultAtol);
    }
  }
  return 0;
}
