#include "devtools/bundled_program/bundled_program.h"

#include <cstring>

#include "devtools/bundled_program/schema/bundled_program_generated.h"
#include "runtime/core/evalue.h"
#include "runtime/core/tensor.h"

namespace torchlight {
namespace bundled {
namespace {

namespace fbs = ::bundled_program_flatbuffer;

// As the .pte verifier: deep or huge table graphs are rejected, not walked.
constexpr flatbuffers::uoffset_t kMaxVerifierDepth = 64;
constexpr flatbuffers::uoffset_t kMaxVerifierTables = 1u << 24;

int len(std::string_view s) { return static_cast<int>(s.size()); }

const char* union_name(fbs::ValueUnion type) {
  const char* name = fbs::EnumNameValueUnion(type);
  return name[0] != '\0' ? name : "an unknown value type";
}

// Checks a stored tensor before anything reads it: a valid dtype, at most
// kMaxTensorDim sizes, a dim order that is a permutation of the same
// length, and exactly numel x element size bytes of data.
Status check_tensor(const fbs::Tensor* t) {
  TL_CHECK_OR_RETURN(t != nullptr, Error::kInvalidProgram, "the Tensor value is missing");
  const auto type = static_cast<ScalarType>(t->scalar_type());
  TL_CHECK_OR_RETURN(is_valid(type) && element_size(type) > 0, Error::kInvalidProgram,
                     "scalar_type %d is not a valid dtype", static_cast<int>(t->scalar_type()));
  const size_t dim = t->sizes() == nullptr ? 0 : t->sizes()->size();
  TL_CHECK_OR_RETURN(dim <= kMaxTensorDim, Error::kInvalidProgram,
                     "%zu dimensions, more than the %zu supported", dim, kMaxTensorDim);
  const size_t order_dim = t->dim_order() == nullptr ? 0 : t->dim_order()->size();
  TL_CHECK_OR_RETURN(t->dim_order() == nullptr || order_dim == dim, Error::kInvalidProgram,
                     "dim_order has %zu entries for %zu sizes", order_dim, dim);
  SizesType sizes[kMaxTensorDim];
  DimOrderType order[kMaxTensorDim];
  StridesType strides[kMaxTensorDim];
  for (size_t d = 0; d < dim; ++d) {
    sizes[d] = t->sizes()->Get(static_cast<flatbuffers::uoffset_t>(d));
    order[d] = t->dim_order() != nullptr
                   ? t->dim_order()->Get(static_cast<flatbuffers::uoffset_t>(d))
                   : static_cast<DimOrderType>(d);
  }
  int64_t numel = 0;
  char text[128];
  TL_CHECK_OR_RETURN(compute_numel({sizes, dim}, &numel), Error::kInvalidProgram,
                     "sizes %s are negative or overflow", format_sizes({sizes, dim}, text,
                                                                       sizeof(text)));
  TL_CHECK_OR_RETURN(compute_strides({sizes, dim}, {order, dim}, strides), Error::kInvalidProgram,
                     "dim_order is not a permutation of 0..%zu", dim == 0 ? 0 : dim - 1);
  const size_t nbytes = t->data() == nullptr ? 0 : t->data()->size();
  const size_t item = element_size(type);
  TL_CHECK_OR_RETURN(static_cast<uint64_t>(numel) <= nbytes / item &&
                         static_cast<uint64_t>(numel) * item == nbytes,
                     Error::kInvalidProgram,
                     "%zu bytes of data, but %s sizes %s need %lld elements of %zu bytes", nbytes,
                     to_string(type), format_sizes({sizes, dim}, text, sizeof(text)),
                     static_cast<long long>(numel), item);
  return Error::kOk;
}

// A TensorImpl over a checked stored tensor: metadata copied here, data used
// in place from the file.
class StoredTensor {
 public:
  explicit StoredTensor(const fbs::Tensor* t)
      : impl_(copy_metadata(t), t->sizes() == nullptr ? 0 : t->sizes()->size(), sizes_,
              t->data() == nullptr || t->data()->size() == 0
                  ? nullptr
                  : const_cast<uint8_t*>(t->data()->data()),
              dim_order_, strides_) {}
  StoredTensor(const StoredTensor&) = delete;
  StoredTensor& operator=(const StoredTensor&) = delete;

  Tensor tensor() { return Tensor(&impl_); }

 private:
  // Runs before impl_ is built (its arguments are evaluated first).
  ScalarType copy_metadata(const fbs::Tensor* t) {
    const size_t dim = t->sizes() == nullptr ? 0 : t->sizes()->size();
    for (size_t d = 0; d < dim; ++d) {
      const auto i = static_cast<flatbuffers::uoffset_t>(d);
      sizes_[d] = t->sizes()->Get(i);
      dim_order_[d] = t->dim_order() != nullptr ? t->dim_order()->Get(i)
                                                : static_cast<DimOrderType>(d);
    }
    bool ok = compute_strides({sizes_, dim}, {dim_order_, dim}, strides_);
    TL_DEBUG_ASSERT(ok);  // check_tensor ran first.
    (void)ok;
    return static_cast<ScalarType>(t->scalar_type());
  }

  SizesType sizes_[kMaxTensorDim] = {};
  DimOrderType dim_order_[kMaxTensorDim] = {};
  StridesType strides_[kMaxTensorDim] = {};
  TensorImpl impl_;
};

size_t count(const fbs::BundledMethodTestCase* c, bool outputs) {
  const auto* values = outputs ? c->expected_outputs() : c->inputs();
  return values == nullptr ? 0 : values->size();
}

const fbs::Value* value_at(const fbs::BundledMethodTestCase* c, bool outputs, size_t i) {
  const auto* values = outputs ? c->expected_outputs() : c->inputs();
  return values->Get(static_cast<flatbuffers::uoffset_t>(i));
}

// Checks one stored input or expected output; expected outputs must be tensors.
Status check_value(const fbs::Value* v, bool output) {
  switch (v->val_type()) {
    case fbs::ValueUnion::Tensor:
      return check_tensor(v->val_as_Tensor());
    case fbs::ValueUnion::Int:
    case fbs::ValueUnion::Bool:
    case fbs::ValueUnion::Double:
      TL_CHECK_OR_RETURN(!output, Error::kNotSupported,
                         "it is %s; expected outputs must be tensors", union_name(v->val_type()));
      TL_CHECK_OR_RETURN(v->val() != nullptr, Error::kInvalidProgram, "the %s value is missing",
                         union_name(v->val_type()));
      return Error::kOk;
    default:
      return Status::error(Error::kNotSupported, "it holds %s (union tag %d)",
                           union_name(v->val_type()), static_cast<int>(v->val_type()));
  }
}

}  // namespace

bool is_bundled_program(Span<const uint8_t> data) {
  return data.size() >= 8 && std::memcmp(data.data() + 4, kFileIdentifier, 4) == 0;
}

Result<BundledProgram> BundledProgram::parse(Span<const uint8_t> file, const char* name) {
  TL_CHECK_OR_RETURN(file.size() >= 8, Error::kInvalidProgram,
                     "%s: %zu bytes is too short for a bundled program", name, file.size());
  TL_CHECK_OR_RETURN(is_bundled_program(file), Error::kInvalidProgram,
                     "%s: not a bundled program: identifier is '%.4s', expected '%s'", name,
                     reinterpret_cast<const char*>(file.data() + 4), kFileIdentifier);
  flatbuffers::Verifier::Options options;
  options.max_depth = kMaxVerifierDepth;
  options.max_tables = kMaxVerifierTables;
  flatbuffers::Verifier verifier(file.data(), file.size(), options);
  TL_CHECK_OR_RETURN(fbs::VerifyBundledProgramBuffer(verifier), Error::kInvalidProgram,
                     "%s: the bundled program failed flatbuffer verification (truncated or "
                     "corrupt)",
                     name);
  const fbs::BundledProgram* root = fbs::GetBundledProgram(file.data());
  TL_CHECK_OR_RETURN(root->program() != nullptr && root->program()->size() > 0,
                     Error::kInvalidProgram, "%s: the bundled program holds no program", name);
  if (root->method_test_suites() != nullptr) {
    for (flatbuffers::uoffset_t i = 0; i < root->method_test_suites()->size(); ++i) {
      TL_CHECK_OR_RETURN(root->method_test_suites()->Get(i)->method_name() != nullptr,
                         Error::kInvalidProgram, "%s: test suite %u has no method name", name, i);
    }
  }
  return BundledProgram(root, file, name);
}

Span<const uint8_t> BundledProgram::program_data() const {
  return {root_->program()->data(), root_->program()->size()};
}

bool BundledProgram::is_program_aligned() const {
  return reinterpret_cast<uintptr_t>(root_->program()->data()) % kProgramAlignment == 0;
}

size_t BundledProgram::num_methods() const {
  return root_->method_test_suites() == nullptr ? 0 : root_->method_test_suites()->size();
}

std::string_view BundledProgram::method_name(size_t index) const {
  const auto* suite = root_->method_test_suites()->Get(static_cast<flatbuffers::uoffset_t>(index));
  return {suite->method_name()->c_str(), suite->method_name()->size()};
}

Result<const fbs::BundledMethodTestSuite*> BundledProgram::suite(std::string_view method) const {
  // First match, as upstream: the writer keeps one suite per method.
  for (size_t i = 0; i < num_methods(); ++i) {
    if (method_name(i) == method) {
      return root_->method_test_suites()->Get(static_cast<flatbuffers::uoffset_t>(i));
    }
  }
  return Status::error(Error::kNotFound, "%s: the bundle has no test suite for method '%.*s'",
                       name_, len(method), method.data());
}

Result<size_t> BundledProgram::num_test_cases(std::string_view method) const {
  TL_ASSIGN_OR_RETURN(const fbs::BundledMethodTestSuite* s, suite(method));
  return static_cast<size_t>(s->test_cases() == nullptr ? 0 : s->test_cases()->size());
}

Result<const fbs::BundledMethodTestCase*> BundledProgram::test_case(std::string_view method,
                                                                    size_t index) const {
  TL_ASSIGN_OR_RETURN(const fbs::BundledMethodTestSuite* s, suite(method));
  const size_t cases = s->test_cases() == nullptr ? 0 : s->test_cases()->size();
  TL_CHECK_OR_RETURN(index < cases, Error::kInvalidArgument,
                     "%s: method '%.*s' has %zu test cases; case %zu is out of range", name_,
                     len(method), method.data(), cases, index);
  return s->test_cases()->Get(static_cast<flatbuffers::uoffset_t>(index));
}

Status BundledProgram::check_test_case(std::string_view method, size_t index) const {
  TL_ASSIGN_OR_RETURN(const fbs::BundledMethodTestCase* c, test_case(method, index));
  for (const bool output : {false, true}) {
    for (size_t k = 0; k < count(c, output); ++k) {
      Status s = check_value(value_at(c, output, k), output);
      if (!s.ok()) {
        return s.with_context("%s: method '%.*s' test case %zu %s %zu", name_, len(method),
                              method.data(), index, output ? "expected output" : "input", k);
      }
    }
  }
  return Error::kOk;
}

Status BundledProgram::load_input(Method& method, size_t index) const {
  const std::string_view m = method.name();
  TL_ASSIGN_OR_RETURN(const fbs::BundledMethodTestCase* c, test_case(m, index));
  const size_t given = count(c, false);
  TL_CHECK_OR_RETURN(given == method.inputs_size(), Error::kInvalidArgument,
                     "%s: method '%.*s' test case %zu has %zu inputs, but the method takes %zu",
                     name_, len(m), m.data(), index, given, method.inputs_size());
  for (size_t k = 0; k < given; ++k) {
    const fbs::Value* v = value_at(c, false, k);
    Status s = check_value(v, false);
    if (s.ok()) {
      switch (v->val_type()) {
        case fbs::ValueUnion::Tensor: {
          StoredTensor stored(v->val_as_Tensor());
          s = method.set_input(k, EValue(stored.tensor()));
          break;
        }
        case fbs::ValueUnion::Int:
          s = method.set_input(k, EValue(static_cast<int64_t>(v->val_as_Int()->int_val())));
          break;
        case fbs::ValueUnion::Bool:
          s = method.set_input(k, EValue(v->val_as_Bool()->bool_val()));
          break;
        default:
          s = method.set_input(k, EValue(v->val_as_Double()->double_val()));
          break;
      }
    }
    if (!s.ok()) {
      return s.with_context("%s: method '%.*s' test case %zu input %zu", name_, len(m), m.data(),
                            index, k);
    }
  }
  return Error::kOk;
}

Result<CaseReport> BundledProgram::verify_outputs(const Method& method, size_t index, double rtol,
                                                  double atol) const {
  const std::string_view m = method.name();
  TL_ASSIGN_OR_RETURN(const fbs::BundledMethodTestCase* c, test_case(m, index));
  const size_t expected = count(c, true);
  TL_CHECK_OR_RETURN(expected > 0, Error::kNotSupported,
                     "%s: method '%.*s' test case %zu has no expected outputs to verify", name_,
                     len(m), m.data(), index);
  TL_CHECK_OR_RETURN(expected == method.outputs_size(), Error::kInvalidArgument,
                     "%s: method '%.*s' test case %zu has %zu expected outputs, but the method "
                     "returns %zu",
                     name_, len(m), m.data(), index, expected, method.outputs_size());
  CaseReport report;
  report.passed = true;
  for (size_t k = 0; k < expected; ++k) {
    const fbs::Value* v = value_at(c, true, k);
    Status s = check_value(v, true);
    Result<const EValue*> out = method.output(k);
    if (s.ok() && !out.ok()) s = out.status();
    if (s.ok() && !out.get()->is_tensor()) {
      s = Status::error(Error::kNotSupported, "the method's output is %s, not a tensor",
                        to_string(out.get()->tag()));
    }
    if (!s.ok()) {
      return s.with_context("%s: method '%.*s' test case %zu output %zu", name_, len(m), m.data(),
                            index, k);
    }
    StoredTensor stored(v->val_as_Tensor());
    TensorComparison cmp = compare_tensors(out.get()->to_tensor(), stored.tensor(), rtol, atol);
    report.stats.merge(cmp.stats);
    if (!cmp.passed && report.passed) {
      report.passed = false;
      report.mismatch = cmp.mismatch;
      report.mismatch.with_context("method '%.*s' test case %zu output %zu", len(m), m.data(),
                                   index, k);
    }
  }
  return report;
}

}  // namespace bundled
}  // namespace torchlight
