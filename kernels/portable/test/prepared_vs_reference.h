// One call run twice, through what a kernel's prepare step installs and
// through its reference eval, each on its own fresh outs, and compared:
// both succeed or both fail with the same message, outs end with the same
// sizes and bytes, and the return slot holds the same value (a size op's
// Int, a prim op's Double...). Tests of prepared paths that need no more
// than this (value ops, fills, pads) use it instead of their own copy.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/portable/test/prepare_harness.h"
#include "kernels/portable/test/test_tensor.h"

namespace torchlight::portable::kernel_test {

/// One call's arguments, the return slot last, and the outs it writes.
struct BuiltCall {
  std::vector<std::unique_ptr<TestTensor>> outs;
  std::unique_ptr<KernelArgs> args;
};

/// Builds the same call again with fresh outs (inputs may be shared).
using BuildCall = std::function<BuiltCall()>;

/// The ten real dtypes.
inline constexpr ScalarType kAllDtypes[] = {
    ScalarType::kByte, ScalarType::kChar,  ScalarType::kShort,  ScalarType::kInt,
    ScalarType::kLong, ScalarType::kHalf,  ScalarType::kFloat,  ScalarType::kDouble,
    ScalarType::kBool, ScalarType::kBFloat16};

/// One out of a call: its dtype, its sizes (the bound when dynamic) and layout.
struct OutSpec {
  ScalarType dtype;
  std::vector<SizesType> sizes;
  Layout layout = dynamic_bound();
};

/// An out tensor for a BuiltCall: bounded-dynamic, so a kernel may resize it.
inline EValue add_out(BuiltCall* call, ScalarType dtype, std::vector<SizesType> sizes,
                      Layout layout = dynamic_bound()) {
  call->outs.push_back(
      std::make_unique<TestTensor>(dtype, std::move(sizes), std::vector<double>{}, layout));
  return call->outs.back()->evalue();
}

/// A call of `inputs` (shared between builds), then fresh `outs`, then the
/// return slot.
inline BuildCall with_outs(std::vector<EValue> inputs, std::vector<OutSpec> outs) {
  return [inputs, outs] {
    BuiltCall call;
    std::vector<EValue> list = inputs;
    for (const OutSpec& o : outs) list.push_back(add_out(&call, o.dtype, o.sizes, o.layout));
    list.push_back(EValue());
    call.args = std::make_unique<KernelArgs>(std::move(list));
    return call;
  };
}

inline bool same_value(const EValue& a, const EValue& b) {
  if (a.tag() != b.tag()) return false;
  if (a.is_int()) return a.to_int() == b.to_int();
  if (a.is_bool()) return a.to_bool() == b.to_bool();
  if (a.is_double()) {
    const double x = a.to_double();
    const double y = b.to_double();
    return std::memcmp(&x, &y, sizeof(x)) == 0;  // Bitwise: -0.0 and NaN too.
  }
  return true;  // Tensors: compared through the outs.
}

inline bool same_tensor(TestTensor& a, TestTensor& b) {
  const Tensor x = a.tensor();
  const Tensor y = b.tensor();
  if (a.sizes() != b.sizes() || x.nbytes() != y.nbytes()) return false;
  return x.nbytes() == 0 || std::memcmp(x.const_data_ptr(), y.const_data_ptr(), x.nbytes()) == 0;
}

/// Prepares `name` on one build of the call and runs what it installed,
/// runs the reference eval on another build, and compares them as above.
/// Prepare must accept the call. `after_load`, when given, runs between
/// prepare and the runs (to move a dynamic input's shape, as a run can).
/// Returns whether it installed another eval.
inline bool expect_prepared_matches_reference(const char* name, const BuildCall& build,
                                              const std::function<void()>& after_load = {}) {
  const Kernel& kernel = portable_kernel_named(name);
  EXPECT_NE(kernel.prepare, nullptr) << name;
  BuiltCall fast = build();
  BuiltCall reference = build();
  const Prepared p = prepare_like_loader(kernel, *fast.args);
  EXPECT_TRUE(p.status.ok()) << p.status.message();
  if (!p.status.ok()) return false;
  if (after_load) after_load();
  KernelContext fast_ctx(nullptr, nullptr, name);
  KernelContext reference_ctx(nullptr, nullptr, name);
  p.eval(fast_ctx, fast.args->span());
  kernel.eval(reference_ctx, reference.args->span());
  EXPECT_EQ(fast_ctx.failed(), reference_ctx.failed());
  EXPECT_STREQ(fast_ctx.status().message(), reference_ctx.status().message());
  for (size_t i = 0; i < fast.outs.size(); ++i) {
    EXPECT_TRUE(same_tensor(*fast.outs[i], *reference.outs[i])) << "out " << i;
  }
  const Span<EValue*> a = fast.args->span();
  const Span<EValue*> b = reference.args->span();
  EXPECT_TRUE(same_value(*a[a.size() - 1], *b[b.size() - 1])) << "return slot";
  return p.eval != kernel.eval;
}

/// Load rejects the call with `code` and a message containing `reason`
/// (which names the argument), and the reference eval fails on it with the
/// same message (after the operator's name).
inline void expect_load_rejects_as_reference(const char* name, const BuildCall& build,
                                             Error code, const std::string& reason) {
  const Kernel& kernel = portable_kernel_named(name);
  BuiltCall loaded = build();
  BuiltCall reference = build();
  const Prepared p = prepare_like_loader(kernel, *loaded.args);
  EXPECT_EQ(p.status.code(), code) << name << ": " << p.status.message();
  EXPECT_NE(std::string(p.status.message()).find(reason), std::string::npos)
      << name << ": " << p.status.message();
  KernelContext ctx(nullptr, nullptr, name);
  kernel.eval(ctx, reference.args->span());
  EXPECT_EQ(ctx.status().code(), code);
  EXPECT_EQ(std::string(ctx.status().message()),
            std::string(name) + ": " + p.status.message());
}

/// The status prepare (at load) returns for one build of the call.
inline Status prepare_status(const char* name, const BuildCall& build) {
  BuiltCall call = build();
  return prepare_like_loader(portable_kernel_named(name), *call.args).status;
}

}  // namespace torchlight::portable::kernel_test
