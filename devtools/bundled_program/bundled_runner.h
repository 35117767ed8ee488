// BundledRunner: runs the test cases of a .bpte file. It owns what the
// BundledProgram view leaves to the caller: the file bytes (in aligned
// memory, so the flatbuffer verifier and the program loader see aligned
// data), the embedded program (copied to aligned memory only when the file
// misplaces it) and a Module over it, which owns the Program and each
// method's memory. Like Module, it uses the heap; the core runtime does not.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "devtools/bundled_program/bundled_program.h"
#include "extension/module/module.h"
#include "runtime/backend/backend_registry.h"
#include "runtime/kernel/kernel_registry.h"

namespace torchlight {

namespace bundled {

/// Bytes in 64-byte-aligned heap memory.
class AlignedBytes {
 public:
  AlignedBytes() = default;
  /// Errors: kMemoryAllocationFailed.
  static Result<AlignedBytes> copy_of(Span<const uint8_t> bytes);
  /// The whole file. Errors: kNotFound, kAccessFailed naming the path.
  static Result<AlignedBytes> read_file(const std::string& path);

  Span<const uint8_t> span() const { return {data_.get(), size_}; }

 private:
  struct FreeDeleter {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, FreeDeleter> data_;
  size_t size_ = 0;
};

class BundledRunner {
 public:
  /// Takes the file bytes, verifies the bundle and loads the embedded
  /// program. `kernels` and `backends` (may be null) must outlive the
  /// runner. Errors: as BundledProgram::parse and Program::load (the
  /// latter prefixed with the file name).
  static Result<std::unique_ptr<BundledRunner>> open(AlignedBytes file, std::string name,
                                                     const KernelRegistry& kernels,
                                                     const BackendRegistry* backends);
  BundledRunner(const BundledRunner&) = delete;
  BundledRunner& operator=(const BundledRunner&) = delete;

  const BundledProgram& bundle() const { return *bundle_; }
  /// True when the embedded program had to be copied to be 32-aligned.
  bool program_copied() const { return program_copied_; }

  /// Loads the method (once), sets test case `index`'s inputs, executes and
  /// compares the outputs. Errors: anything that stops the case from being
  /// checked (method load, bad stored values, execute failure), naming the
  /// method and case.
  Result<CaseReport> run_case(std::string_view method, size_t index, double rtol, double atol);

  /// The Module running the embedded program: its limits
  /// (set_max_steps, set_planned_memory_limit) apply to the cases.
  Module& module() { return *module_; }

 private:
  BundledRunner(AlignedBytes file, std::string name) : file_(std::move(file)), name_(std::move(name)) {}

  AlignedBytes file_;
  std::string name_;
  // Borrows file_ and name_, so it is parsed once they are in place.
  std::optional<BundledProgram> bundle_;
  AlignedBytes program_copy_;  // Empty unless the file misaligns the program.
  bool program_copied_ = false;
  // Borrows the bytes above, so it is declared (and destroyed) after them.
  std::unique_ptr<Module> module_;
};

}  // namespace bundled
}  // namespace torchlight
