// BundledProgram: a verified view of a .bpte file (upstream ExecuTorch's
// bundled program, identifier BP08): the embedded .pte plus, per method,
// test cases of inputs and expected outputs.
//
//   auto bundle = BundledProgram::parse({data, size}, "model.bpte");
//   BufferDataLoader loader(bundle->program_data().data(), ...);
//   ... load the Program and a Method from it ...
//   bundle->load_input(method, 3);
//   method.execute();
//   auto report = bundle->verify_outputs(method, 3);
//
// Unlike upstream, parse() runs the flatbuffers verifier and every tensor is
// checked (dtype, sizes, dim order, byte count) before it is used, so a
// corrupt file gives an error naming the method, case and reason, never a
// read out of bounds. This is a devtools library: the core runtime does not
// depend on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "devtools/bundled_program/tensor_compare.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"
#include "runtime/executor/method.h"

namespace bundled_program_flatbuffer {
struct BundledProgram;
struct BundledMethodTestSuite;
struct BundledMethodTestCase;
}  // namespace bundled_program_flatbuffer

namespace torchlight {
namespace bundled {

/// The file identifier at bytes 4..7.
constexpr char kFileIdentifier[] = "BP08";
/// Alignment the embedded program needs (the .pte loader's).
constexpr size_t kProgramAlignment = 32;
/// Upstream's default tolerances for verify_method_outputs.
constexpr double kDefaultRtol = 1e-5;
constexpr double kDefaultAtol = 1e-8;

/// True when `data` has the BP08 identifier. Checks nothing else.
bool is_bundled_program(Span<const uint8_t> data);

/// The verdict on one test case's outputs.
struct CaseReport {
  bool passed = false;
  ErrorStats stats;  // Over all outputs' elements.
  /// When it failed: which output and why ("output 0: element 3 is ...").
  Status mismatch;
};

class BundledProgram {
 public:
  /// Verifies `file` as a bundled program. Borrows `file`, which must outlive
  /// the BundledProgram, stay unchanged, and (for the flatbuffers verifier's
  /// alignment checks) start on an 8-byte boundary. `name` labels errors and
  /// must outlive the object too.
  /// Errors: kInvalidProgram naming the file and the first problem (wrong
  /// identifier, failed verification, missing program, duplicate method).
  static Result<BundledProgram> parse(Span<const uint8_t> file, const char* name);

  /// The embedded .pte bytes, in place. Check is_program_aligned() before
  /// handing them to the program loader; copy them when it is false.
  Span<const uint8_t> program_data() const;
  bool is_program_aligned() const;

  size_t num_methods() const;
  /// Name of the method of test suite `index` (< num_methods()).
  std::string_view method_name(size_t index) const;
  /// Test cases for `method`. Errors: kNotFound when the bundle has no
  /// suite for it.
  Result<size_t> num_test_cases(std::string_view method) const;

  /// Checks every stored value of test case `index` of `method` (tensor
  /// dtype, sizes, dim order and byte count; union tags) without running
  /// anything. Errors: as load_input and verify_outputs.
  Status check_test_case(std::string_view method, size_t index) const;

  /// Sets every input of `method` from test case `index`. Tensor data is
  /// used in place from the file: Method::set_input copies it into planned
  /// memory, or borrows it for an unplanned input (the file bytes must then
  /// outlive the execute).
  /// Errors: kNotFound (no suite for the method), kInvalidArgument (case
  /// index out of range, input count differs from the method's), kInvalidProgram
  /// (a stored tensor is inconsistent), kNotSupported (an empty union), and
  /// whatever set_input returns; every message names method, case and input.
  Status load_input(Method& method, size_t index) const;

  /// Compares the outputs of `method` (after execute) with test case
  /// `index`'s expected outputs. A mismatch is reported in the CaseReport;
  /// errors are for cases that cannot be checked: kNotFound, kInvalidArgument
  /// (index out of range, output count differs), kNotSupported (no expected
  /// outputs, or a non-tensor expected output), kInvalidProgram (a stored
  /// tensor is inconsistent).
  Result<CaseReport> verify_outputs(const Method& method, size_t index,
                                    double rtol = kDefaultRtol, double atol = kDefaultAtol) const;

 private:
  BundledProgram(const bundled_program_flatbuffer::BundledProgram* root, Span<const uint8_t> file,
                 const char* name)
      : root_(root), file_(file), name_(name) {}

  Result<const bundled_program_flatbuffer::BundledMethodTestSuite*> suite(
      std::string_view method) const;
  Result<const bundled_program_flatbuffer::BundledMethodTestCase*> test_case(
      std::string_view method, size_t index) const;

  const bundled_program_flatbuffer::BundledProgram* root_;
  Span<const uint8_t> file_;
  const char* name_;
};

}  // namespace bundled
}  // namespace torchlight
