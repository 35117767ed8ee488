// Conformance cases: reading the manifest generate.py writes, and running one
// case through a kernel registry against torch's expected outputs.
//
// Test-only code (heap, std containers, exceptions from the JSON parser are
// caught at load).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/scalar_type.h"
#include "runtime/core/span.h"
#include "runtime/core/tensor.h"
#include "runtime/kernel/kernel_registry.h"

namespace torchlight::conformance {

/// A tensor stored as .npy bytes in tensors.bin (logical row-major order)
/// and the layout the kernel must see it in.
struct TensorSpec {
  std::string name;  // For messages: "c00012_a0".
  uint64_t offset = 0;  // Of its .npy bytes in tensors.bin.
  uint64_t nbytes = 0;
  ScalarType dtype = ScalarType::kFloat;
  std::vector<SizesType> shape;
  std::vector<DimOrderType> dim_order;
  bool bf16 = false;  // Stored as uint16 bits.
};

/// One argument value.
struct ValueSpec {
  enum class Kind {
    kNone,
    kInt,
    kDouble,
    kBool,
    kString,
    kTensor,
    kIntList,
    kDoubleList,
    kBoolList,
    kTensorList,
    kOptionalTensorList,
  };
  Kind kind = Kind::kNone;
  int64_t int_value = 0;
  double double_value = 0;
  bool bool_value = false;
  std::string string_value;
  std::vector<int64_t> ints;
  std::vector<double> doubles;
  std::vector<uint8_t> bools;
  TensorSpec tensor;
  std::vector<ValueSpec> items;  // Tensor lists: kTensor or kNone entries.
};

/// One out tensor: how the kernel gets it and what it must hold afterwards.
struct OutSpec {
  ScalarType dtype = ScalarType::kFloat;
  std::vector<SizesType> shape;  // Initial shape.
  std::vector<DimOrderType> dim_order;
  double rtol = 0;
  double atol = 0;
  bool has_expected = false;  // False for expect_error cases.
  TensorSpec expected;
};

struct CaseSpec {
  enum class Returns { kNone, kOut, kList };
  std::string id;      // "aten::add.out[self=f32[2,3],other=f32[3]]"
  std::string op;      // Kernel name.
  std::string module;  // cases/<module>.py
  std::vector<ValueSpec> args;  // Non-out arguments in schema order.
  std::vector<OutSpec> outs;
  bool list_out = false;  // The outs form one Tensor[] argument.
  Returns returns = Returns::kOut;
  bool expect_error = false;
  std::string error_substring;
};

/// What generate.py wrote: the cases and every tensor's .npy bytes.
struct Manifest {
  std::vector<CaseSpec> cases;
  std::vector<uint8_t> tensors;  // tensors.bin
};

/// Reads `dir`/manifest.json and the tensor file it names into *manifest.
/// Returns false with *error set when a file is missing or malformed.
bool load_manifest(const std::string& dir, Manifest* manifest, std::string* error);

/// Runs `spec` through `registry`, its tensors read from `tensors`
/// (Manifest::tensors). Returns the failures, one per line; empty when the
/// case passes.
std::string run_case(const CaseSpec& spec, Span<const uint8_t> tensors,
                     const KernelRegistry& registry);

}  // namespace torchlight::conformance
