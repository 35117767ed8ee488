#include "kernels/portable/conformance/conformance_case.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "extension/npy/npy.h"
#include "extension/tensor/owned_tensor.h"
#include "runtime/core/evalue.h"
#include "runtime/core/half.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/kernel/kernel_context.h"

namespace torchlight::conformance {
namespace {

using nlohmann::json;

// ---------------------------------------------------------------------------
// Manifest parsing. nlohmann throws on type mismatches; load_manifest catches.

ScalarType parse_dtype(const std::string& name) {
  static const std::pair<const char*, ScalarType> kNames[] = {
      {"uint8", ScalarType::kByte},     {"int8", ScalarType::kChar},
      {"int16", ScalarType::kShort},    {"int32", ScalarType::kInt},
      {"int64", ScalarType::kLong},     {"float16", ScalarType::kHalf},
      {"float32", ScalarType::kFloat},  {"float64", ScalarType::kDouble},
      {"bool", ScalarType::kBool},      {"bfloat16", ScalarType::kBFloat16},
  };
  for (const auto& entry : kNames) {
    if (name == entry.first) return entry.second;
  }
  throw std::runtime_error("unknown dtype '" + name + "'");
}

double parse_double(const json& j) {
  // Doubles are stored as Python repr() strings so nan/inf survive JSON.
  if (j.is_number()) return j.get<double>();
  const std::string text = j.get<std::string>();
  if (text == "nan") return NAN;
  if (text == "inf") return INFINITY;
  if (text == "-inf") return -INFINITY;
  return std::strtod(text.c_str(), nullptr);
}

std::vector<SizesType> parse_shape(const json& j) {
  std::vector<SizesType> shape;
  for (const json& s : j) shape.push_back(static_cast<SizesType>(s.get<int64_t>()));
  return shape;
}

std::vector<DimOrderType> parse_dim_order(const json& j) {
  std::vector<DimOrderType> order;
  for (const json& d : j) order.push_back(static_cast<DimOrderType>(d.get<int>()));
  return order;
}

TensorSpec parse_tensor(const json& j) {
  TensorSpec t;
  t.name = j.at("name").get<std::string>();
  t.offset = j.at("offset").get<uint64_t>();
  t.nbytes = j.at("nbytes").get<uint64_t>();
  t.dtype = parse_dtype(j.at("dtype").get<std::string>());
  t.shape = parse_shape(j.at("shape"));
  t.dim_order = parse_dim_order(j.at("dim_order"));
  t.bf16 = j.at("bf16").get<bool>();
  return t;
}

ValueSpec parse_value(const json& j) {
  using Kind = ValueSpec::Kind;
  ValueSpec v;
  const std::string kind = j.at("kind").get<std::string>();
  if (kind == "none") {
    v.kind = Kind::kNone;
  } else if (kind == "int") {
    v.kind = Kind::kInt;
    v.int_value = j.at("value").get<int64_t>();
  } else if (kind == "double") {
    v.kind = Kind::kDouble;
    v.double_value = parse_double(j.at("value"));
  } else if (kind == "bool") {
    v.kind = Kind::kBool;
    v.bool_value = j.at("value").get<bool>();
  } else if (kind == "string") {
    v.kind = Kind::kString;
    v.string_value = j.at("value").get<std::string>();
  } else if (kind == "tensor") {
    v.kind = Kind::kTensor;
    v.tensor = parse_tensor(j);
  } else if (kind == "int_list") {
    v.kind = Kind::kIntList;
    for (const json& x : j.at("value")) v.ints.push_back(x.get<int64_t>());
  } else if (kind == "double_list") {
    v.kind = Kind::kDoubleList;
    for (const json& x : j.at("value")) v.doubles.push_back(parse_double(x));
  } else if (kind == "bool_list") {
    v.kind = Kind::kBoolList;
    for (const json& x : j.at("value")) v.bools.push_back(x.get<bool>() ? 1 : 0);
  } else if (kind == "tensor_list" || kind == "optional_tensor_list") {
    v.kind = kind == "tensor_list" ? Kind::kTensorList : Kind::kOptionalTensorList;
    for (const json& x : j.at("items")) v.items.push_back(parse_value(x));
  } else {
    throw std::runtime_error("unknown value kind '" + kind + "'");
  }
  return v;
}

CaseSpec parse_case(const json& j) {
  CaseSpec c;
  c.id = j.at("id").get<std::string>();
  c.op = j.at("op").get<std::string>();
  c.module = j.value("module", "");
  for (const json& a : j.at("args")) c.args.push_back(parse_value(a));
  for (const json& o : j.at("outs")) {
    OutSpec out;
    out.dtype = parse_dtype(o.at("dtype").get<std::string>());
    out.shape = parse_shape(o.at("shape"));
    out.dim_order = parse_dim_order(o.at("dim_order"));
    out.rtol = o.at("rtol").get<double>();
    out.atol = o.at("atol").get<double>();
    if (o.contains("expected")) {
      out.has_expected = true;
      out.expected = parse_tensor(o.at("expected"));
    }
    c.outs.push_back(std::move(out));
  }
  c.list_out = j.at("list_out").get<bool>();
  const std::string returns = j.at("returns").get<std::string>();
  c.returns = returns == "none"   ? CaseSpec::Returns::kNone
              : returns == "list" ? CaseSpec::Returns::kList
                                  : CaseSpec::Returns::kOut;
  if (!j.at("expect_error").is_null()) {
    c.expect_error = true;
    c.error_substring = j.at("expect_error").get<std::string>();
  }
  return c;
}

// ---------------------------------------------------------------------------
// Tensors: loading, logical element walks, comparison.

/// Calls f(offset_a, offset_b) for every logical index of `sizes`, offsets in
/// elements through each tensor's strides.
template <typename F>
void for_each_element(Span<const SizesType> sizes, Span<const StridesType> strides_a,
                      Span<const StridesType> strides_b, F f) {
  const size_t dim = sizes.size();
  for (size_t d = 0; d < dim; ++d) {
    if (sizes[d] == 0) return;
  }
  int64_t index[kMaxTensorDim] = {};
  int64_t off_a = 0;
  int64_t off_b = 0;
  while (true) {
    f(off_a, off_b);
    // Odometer step: bump the innermost dim, carrying outward.
    size_t d = dim;
    while (true) {
      if (d == 0) return;  // Every dim wrapped (or 0-d): done.
      --d;
      if (++index[d] < sizes[d]) {
        off_a += strides_a[d];
        off_b += strides_b[d];
        break;
      }
      off_a -= strides_a[d] * (sizes[d] - 1);
      off_b -= strides_b[d] * (sizes[d] - 1);
      index[d] = 0;
    }
  }
}

std::string format_shape(Span<const SizesType> sizes) {
  char buffer[256];
  return format_sizes(sizes, buffer, sizeof(buffer));
}

/// Reads the tensor's .npy bytes from `blob` and lays it out as spec says;
/// nullopt with *error set when they do not match the manifest.
std::optional<OwnedTensor> load_tensor(Span<const uint8_t> blob, const TensorSpec& spec,
                                       std::string* error) {
  if (spec.offset > blob.size() || spec.nbytes > blob.size() - spec.offset) {
    *error = spec.name + ": outside tensors.bin";
    return std::nullopt;
  }
  Result<OwnedTensor> raw = read_npy_bytes(blob.subspan(spec.offset, spec.nbytes),
                                           spec.name.c_str());
  if (!raw.ok()) {
    *error = std::string("cannot read ") + spec.name + ": " + raw.status().message();
    return std::nullopt;
  }
  const ScalarType stored = spec.bf16 ? ScalarType::kUInt16 : spec.dtype;
  if (raw->scalar_type() != stored || raw->dim() != spec.shape.size()) {
    *error = spec.name + ": dtype or rank differs from the manifest";
    return std::nullopt;
  }
  Result<OwnedTensor> laid_out = OwnedTensor::make_with_dim_order(spec.dtype, spec.shape,
                                                                  spec.dim_order);
  if (!laid_out.ok()) {
    *error = spec.name + ": " + laid_out.status().message();
    return std::nullopt;
  }
  const Tensor src = raw->tensor();
  const Tensor dst = laid_out->tensor();
  if (format_shape(src.sizes()) != format_shape(dst.sizes())) {
    *error = spec.name + ": shape differs from the manifest";
    return std::nullopt;
  }
  const size_t size = dst.element_size();
  const auto* from = src.const_data_ptr<uint8_t>();
  auto* to = dst.mutable_data_ptr<uint8_t>();
  for_each_element(dst.sizes(), src.strides(), dst.strides(), [&](int64_t a, int64_t b) {
    std::memcpy(to + b * size, from + a * size, size);
  });
  return std::move(*laid_out);
}

bool is_exact(ScalarType t) { return !is_floating_point(t); }

int64_t load_int(ScalarType type, const uint8_t* p) {
  auto get = [p](auto v) {
    std::memcpy(&v, p, sizeof(v));
    return static_cast<int64_t>(v);
  };
  switch (type) {
    case ScalarType::kByte: return get(uint8_t{});
    case ScalarType::kChar: return get(int8_t{});
    case ScalarType::kShort: return get(int16_t{});
    case ScalarType::kInt: return get(int32_t{});
    case ScalarType::kLong: return get(int64_t{});
    case ScalarType::kBool: return get(uint8_t{});  // Any byte but 0 or 1 is a kernel bug.
    default: return 0;
  }
}

double load_float(ScalarType type, const uint8_t* p) {
  uint16_t bits = 0;
  switch (type) {
    case ScalarType::kHalf:
      std::memcpy(&bits, p, 2);
      return Half::to_float(bits);
    case ScalarType::kBFloat16:
      std::memcpy(&bits, p, 2);
      return BFloat16::to_float(bits);
    case ScalarType::kFloat: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case ScalarType::kDouble: {
      double d;
      std::memcpy(&d, p, 8);
      return d;
    }
    default: return 0;
  }
}

std::string format_index(Span<const SizesType> sizes, int64_t linear) {
  std::vector<int64_t> index(sizes.size());
  for (size_t d = sizes.size(); d > 0; --d) {
    index[d - 1] = linear % sizes[d - 1];
    linear /= sizes[d - 1];
  }
  std::ostringstream s;
  s << "[";
  for (size_t d = 0; d < index.size(); ++d) s << (d ? ", " : "") << index[d];
  s << "]";
  return s.str();
}

/// Compares `actual` (any layout) with `expected` (contiguous, same dtype and
/// shape); appends mismatches to *failures.
void compare_values(const std::string& what, const Tensor& actual, const Tensor& expected,
                    double rtol, double atol, std::ostringstream* failures) {
  const ScalarType type = actual.scalar_type();
  const size_t size = actual.element_size();
  const auto* a = actual.const_data_ptr<uint8_t>();
  const auto* e = expected.const_data_ptr<uint8_t>();
  int64_t linear = 0;
  int64_t mismatches = 0;
  constexpr int64_t kShown = 6;
  for_each_element(actual.sizes(), actual.strides(), expected.strides(),
                   [&](int64_t off_a, int64_t off_e) {
    bool ok = true;
    std::ostringstream got;
    std::ostringstream want;
    if (is_exact(type)) {
      const int64_t x = load_int(type, a + off_a * size);
      const int64_t y = load_int(type, e + off_e * size);
      ok = x == y;
      got << x;
      want << y;
    } else {
      const double x = load_float(type, a + off_a * size);
      const double y = load_float(type, e + off_e * size);
      if (std::isnan(y) || std::isnan(x)) {
        ok = std::isnan(x) && std::isnan(y);
      } else if (std::isinf(y) || std::isinf(x)) {
        ok = x == y;
      } else {
        ok = std::fabs(x - y) <= atol + rtol * std::fabs(y);
      }
      got.precision(9);
      want.precision(9);
      got << x;
      want << y;
    }
    if (!ok) {
      if (mismatches < kShown) {
        *failures << "  " << what << format_index(actual.sizes(), linear) << ": got " << got.str()
                  << ", expected " << want.str() << "\n";
      }
      ++mismatches;
    }
    ++linear;
  });
  if (mismatches > kShown) {
    *failures << "  " << what << ": " << mismatches << " of " << linear
              << " elements differ (rtol " << rtol << ", atol " << atol << ")\n";
  }
}

/// Whether two tensors of one dtype and shape hold the same bytes per element.
bool same_bytes(const Tensor& a, const Tensor& b) {
  const size_t size = a.element_size();
  bool same = true;
  for_each_element(a.sizes(), a.strides(), b.strides(), [&](int64_t x, int64_t y) {
    same = same && std::memcmp(a.const_data_ptr<uint8_t>() + x * size,
                               b.const_data_ptr<uint8_t>() + y * size, size) == 0;
  });
  return same;
}

// ---------------------------------------------------------------------------
// Building a kernel's arguments.

/// Owns everything the EValues of one call point at. Deques keep addresses
/// stable as entries are added.
struct Frame {
  std::deque<OwnedTensor> tensors;
  std::deque<EValue> values;
  std::deque<std::vector<EValue*>> pointer_lists;
  std::deque<std::vector<int64_t>> int_scratch;
  std::deque<std::vector<Tensor>> tensor_scratch;
  std::deque<std::vector<double>> doubles;
  std::deque<std::unique_ptr<bool[]>> bools;
  std::deque<std::string> strings;
  // Input tensors with their file contents, to check they stay untouched.
  std::vector<std::pair<Tensor, TensorSpec>> inputs;

  EValue* add(EValue v) {
    values.push_back(v);
    return &values.back();
  }
};

EValue* build_value(const ValueSpec& v, Span<const uint8_t> blob, Frame* frame,
                    std::string* error) {
  using Kind = ValueSpec::Kind;
  switch (v.kind) {
    case Kind::kNone: return frame->add(EValue());
    case Kind::kInt: return frame->add(EValue(v.int_value));
    case Kind::kDouble: return frame->add(EValue(v.double_value));
    case Kind::kBool: return frame->add(EValue(v.bool_value));
    case Kind::kString:
      frame->strings.push_back(v.string_value);
      return frame->add(EValue(std::string_view(frame->strings.back())));
    case Kind::kTensor: {
      std::optional<OwnedTensor> t = load_tensor(blob, v.tensor, error);
      if (!t) return nullptr;
      frame->tensors.push_back(std::move(*t));
      frame->inputs.emplace_back(frame->tensors.back().tensor(), v.tensor);
      return frame->add(frame->tensors.back().evalue());
    }
    case Kind::kIntList: {
      std::vector<EValue*> items;
      for (int64_t x : v.ints) items.push_back(frame->add(EValue(x)));
      frame->pointer_lists.push_back(std::move(items));
      frame->int_scratch.emplace_back(v.ints.size());
      return frame->add(EValue(BoxedList<int64_t>(frame->pointer_lists.back().data(),
                                                  frame->int_scratch.back().data(),
                                                  v.ints.size())));
    }
    case Kind::kDoubleList:
      frame->doubles.push_back(v.doubles);
      return frame->add(EValue(Span<const double>(frame->doubles.back().data(),
                                                  frame->doubles.back().size())));
    case Kind::kBoolList: {
      frame->bools.emplace_back(new bool[v.bools.size() + 1]);
      for (size_t i = 0; i < v.bools.size(); ++i) frame->bools.back()[i] = v.bools[i] != 0;
      return frame->add(EValue(Span<const bool>(frame->bools.back().get(), v.bools.size())));
    }
    case Kind::kTensorList:
    case Kind::kOptionalTensorList: {
      std::vector<EValue*> items;
      for (const ValueSpec& item : v.items) {
        EValue* value = build_value(item, blob, frame, error);
        if (value == nullptr) return nullptr;
        items.push_back(value);
      }
      frame->pointer_lists.push_back(std::move(items));
      frame->tensor_scratch.emplace_back(v.items.size());
      return frame->add(EValue(BoxedList<Tensor>(frame->pointer_lists.back().data(),
                                                 frame->tensor_scratch.back().data(),
                                                 v.items.size()),
                               v.kind == Kind::kOptionalTensorList));
    }
  }
  *error = "unknown value kind";
  return nullptr;
}

int64_t numel_of(const std::vector<SizesType>& shape) {
  int64_t n = 1;
  for (SizesType s : shape) n *= s;
  return n;
}

/// An out tensor starting at spec.shape, able to grow to the expected shape
/// (DYNAMIC_BOUND), filled with a byte pattern so unwritten elements show.
std::optional<OwnedTensor> make_out(const OutSpec& spec, std::string* error) {
  std::vector<SizesType> capacity_shape = spec.shape;
  if (spec.has_expected && spec.expected.shape.size() == spec.shape.size() &&
      numel_of(spec.expected.shape) > numel_of(spec.shape)) {
    capacity_shape = spec.expected.shape;
  }
  Result<OwnedTensor> t = OwnedTensor::make_with_dim_order(
      spec.dtype, capacity_shape, spec.dim_order, TensorShapeDynamism::kDynamicBound);
  if (!t.ok()) {
    *error = std::string("cannot make the out tensor: ") + t.status().message();
    return std::nullopt;
  }
  if (t->nbytes() > 0) std::memset(t->tensor().mutable_data_ptr<uint8_t>(), 0x5a, t->nbytes());
  if (capacity_shape != spec.shape) {
    Status s = t->tensor().resize({spec.shape.data(), spec.shape.size()});
    if (!s.ok()) {
      *error = std::string("cannot size the out tensor: ") + s.message();
      return std::nullopt;
    }
  }
  return std::move(*t);
}

}  // namespace

bool load_manifest(const std::string& dir, Manifest* manifest, std::string* error) {
  const std::string path = dir + "/manifest.json";
  std::ifstream file(path);
  if (!file) {
    *error = "cannot open " + path + " (run generate.py first)";
    return false;
  }
  try {
    const json j = json::parse(file);
    for (const json& c : j.at("cases")) manifest->cases.push_back(parse_case(c));
    const std::string blob_path = dir + "/" + j.at("tensors").get<std::string>();
    std::ifstream blob(blob_path, std::ios::binary);
    if (!blob) {
      *error = "cannot open " + blob_path;
      return false;
    }
    manifest->tensors.assign(std::istreambuf_iterator<char>(blob), std::istreambuf_iterator<char>());
  } catch (const std::exception& e) {
    *error = path + ": " + e.what();
    return false;
  }
  return true;
}

std::string run_case(const CaseSpec& spec, Span<const uint8_t> blob,
                     const KernelRegistry& registry) {
  std::ostringstream failures;
  std::string error;
  Frame frame;
  std::vector<EValue*> args;
  for (const ValueSpec& v : spec.args) {
    EValue* value = build_value(v, blob, &frame, &error);
    if (value == nullptr) return "harness: " + error + "\n";
    args.push_back(value);
  }
  std::vector<Tensor> outs;
  std::vector<EValue*> out_values;
  for (const OutSpec& o : spec.outs) {
    std::optional<OwnedTensor> t = make_out(o, &error);
    if (!t) return "harness: " + error + "\n";
    frame.tensors.push_back(std::move(*t));
    outs.push_back(frame.tensors.back().tensor());
    out_values.push_back(frame.add(frame.tensors.back().evalue()));
  }
  EValue* out_list = nullptr;
  if (spec.list_out || spec.returns == CaseSpec::Returns::kList) {
    frame.pointer_lists.push_back(out_values);
    frame.tensor_scratch.emplace_back(out_values.size());
    out_list = frame.add(EValue(BoxedList<Tensor>(frame.pointer_lists.back().data(),
                                                  frame.tensor_scratch.back().data(),
                                                  out_values.size()),
                                false));
  }
  if (spec.list_out) {
    args.push_back(out_list);
  } else {
    for (EValue* v : out_values) args.push_back(v);
  }
  // The return slot. In a program it is the out value itself; here it starts
  // as None so a kernel that does not set its return is caught.
  EValue* return_slot = nullptr;
  if (spec.returns == CaseSpec::Returns::kOut) {
    if (out_values.size() != 1) return "harness: one return but several outs\n";
    return_slot = frame.add(*out_values[0]);
    args.push_back(return_slot);
  } else if (spec.returns == CaseSpec::Returns::kList) {
    args.push_back(frame.add(*out_list));
  } else if (spec.list_out) {
    // A schema returning nothing: upstream's emitter (and ours) still
    // appends a second TensorList naming the outs.
    args.push_back(frame.add(*out_list));
  }

  // Resolve as the method loader does, by the arguments' positions.
  TensorArgMeta metas[32];
  const size_t num_metas = describe_args({args.data(), args.size()}, metas, 32);
  Result<const Kernel*> kernel = registry.resolve(spec.op, {metas, num_metas});
  if (!kernel.ok()) {
    return "no kernel: " + std::string(kernel.status().message()) + "\n";
  }
  if (return_slot != nullptr) *return_slot = EValue();

  // Through the schema check, prepare and eval, as a loaded method runs it.
  static std::vector<uint8_t> temp_buffer(64 << 20);
  static std::vector<uint8_t> method_buffer(64 << 20);
  MemoryAllocator temp(temp_buffer.data(), temp_buffer.size());
  MemoryAllocator method_memory(method_buffer.data(), method_buffer.size());
  const Status status = call_kernel(*kernel.get(), {args.data(), args.size()}, &method_memory, &temp);

  for (const auto& [tensor, file] : frame.inputs) {
    std::optional<OwnedTensor> original = load_tensor(blob, file, &error);
    if (!original) return "harness: " + error + "\n";
    if (!same_bytes(tensor, original->tensor())) {
      failures << "  the kernel modified input " << file.name << "\n";
    }
  }

  if (spec.expect_error) {
    if (status.ok()) {
      failures << "  expected an error containing '" << spec.error_substring
               << "', but the kernel succeeded\n";
      return failures.str();
    }
    const std::string message = status.message();
    if (message.find(spec.error_substring) == std::string::npos) {
      failures << "  error message '" << message << "' lacks '" << spec.error_substring << "'\n";
    }
    if (message.find(spec.op) == std::string::npos) {
      failures << "  error message '" << message << "' does not name the operator " << spec.op
               << "\n";
    }
    return failures.str();
  }

  if (!status.ok()) {
    failures << "  kernel failed: " << status.message() << "\n";
    return failures.str();
  }
  if (return_slot != nullptr &&
      (!return_slot->is_tensor() || return_slot->to_tensor().impl() != outs[0].impl())) {
    failures << "  the return slot does not hold the out tensor (set_return missing?)\n";
  }
  for (size_t k = 0; k < spec.outs.size(); ++k) {
    const OutSpec& o = spec.outs[k];
    const std::string what = spec.outs.size() == 1 ? "out" : "out" + std::to_string(k);
    std::optional<OwnedTensor> expected = load_tensor(blob, o.expected, &error);
    if (!expected) return "harness: " + error + "\n";
    const Tensor actual = outs[k];
    if (actual.scalar_type() != expected->scalar_type()) {
      failures << "  " << what << " has dtype " << to_string(actual.scalar_type()) << ", expected "
               << to_string(expected->scalar_type()) << "\n";
      continue;
    }
    if (format_shape(actual.sizes()) != format_shape(expected->sizes())) {
      failures << "  " << what << " has shape " << format_shape(actual.sizes()) << ", expected "
               << format_shape(expected->sizes()) << "\n";
      continue;
    }
    compare_values(what, actual, expected->tensor(), o.rtol, o.atol, &failures);
  }
  return failures.str();
}

}  // namespace torchlight::conformance
