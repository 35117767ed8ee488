// The portable spatial kernels' reference eval against the eval their
// prepare step installs (util/pool_prepared.h, util/depthwise_conv.h,
// batch norm), on shapes from ResNet-18 and MobileNetV2, in one run:
//
//   build/release/bench/kernels/torchlight_spatial_prepared_bench [reps]
//
// Prints the best time of `reps` calls (default 20) of each and their ratio,
// and checks that both leave the same bytes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/portable/portable_kernels.h"
#include "kernels/portable/test/list_args.h"
#include "kernels/portable/test/test_tensor.h"

namespace torchlight::portable {
namespace {

using kernel_test::IntListArg;
using kernel_test::KernelArgs;
using kernel_test::Layout;
using kernel_test::TestTensor;

const Kernel* kernel_named(const char* name) {
  for (const Kernel& k : portable_kernels()) {
    if (std::strcmp(k.name, name) == 0) return &k;
  }
  return nullptr;
}

double best_ms(KernelFunction eval, const char* name, KernelArgs& args, int reps) {
  double best = 1e30;
  for (int r = 0; r < reps + 2; ++r) {
    KernelContext ctx(nullptr, nullptr, name);
    const auto t0 = std::chrono::steady_clock::now();
    eval(ctx, args.span());
    const auto t1 = std::chrono::steady_clock::now();
    if (ctx.failed()) {
      std::fprintf(stderr, "%s failed: %s\n", name, ctx.status().message());
      std::exit(1);
    }
    if (r >= 2) best = std::min(best, std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return best;
}

// Runs `name` on args built by make(outs) twice (reference, prepared).
void compare(const char* label, const char* name, const std::vector<TestTensor*>& ref_outs,
             const std::vector<TestTensor*>& fast_outs,
             const std::function<std::vector<EValue>(const std::vector<TestTensor*>&)>& make,
             int reps) {
  const Kernel* kernel = kernel_named(name);
  if (kernel == nullptr || kernel->prepare == nullptr) {
    std::fprintf(stderr, "%s: no prepared portable kernel\n", name);
    std::exit(1);
  }
  auto build = [&](const std::vector<TestTensor*>& outs) {
    std::vector<EValue> list = make(outs);
    list.push_back(EValue());
    return std::make_unique<KernelArgs>(std::move(list));
  };
  auto ref_args = build(ref_outs);
  auto fast_args = build(fast_outs);
  PreparedCall call;
  call.eval = kernel->eval;
  PrepareContext pctx(nullptr, name);
  const Status s = kernel->prepare(pctx, fast_args->span(), &call);
  if (!s.ok() || call.eval == kernel->eval) {
    std::fprintf(stderr, "%s: prepare %s\n", label, s.ok() ? "kept the reference" : s.message());
    std::exit(1);
  }
  const double ref = best_ms(kernel->eval, name, *ref_args, reps);
  const double fast = best_ms(call.eval, name, *fast_args, reps);
  bool same = true;
  for (size_t i = 0; i < ref_outs.size(); ++i) {
    const Tensor a = ref_outs[i]->tensor();
    const Tensor b = fast_outs[i]->tensor();
    same = same && a.nbytes() == b.nbytes() &&
           std::memcmp(a.const_data_ptr(), b.const_data_ptr(), a.nbytes()) == 0;
  }
  std::printf("%-44s %10.3f %10.3f %8.1fx  %s\n", label, ref, fast, ref / fast,
              same ? "bit-identical" : "DIFFERENT");
}

Layout order(bool last) {
  Layout l;
  if (last) l.dim_order = {0, 2, 3, 1};
  return l;
}

void max_pool(bool last, int reps) {
  const std::vector<SizesType> in = {1, 64, 112, 112}, out = {1, 64, 56, 56};
  TestTensor self(ScalarType::kFloat, in, kernel_test::random_float_values(64 * 112 * 112, 1),
                  order(last));
  TestTensor o1(ScalarType::kFloat, out, {}, order(last)), x1(ScalarType::kLong, out, {}, order(last));
  TestTensor o2(ScalarType::kFloat, out, {}, order(last)), x2(ScalarType::kLong, out, {}, order(last));
  IntListArg k({3, 3}), s({2, 2}), p({1, 1}), d({1, 1});
  compare(last ? "max_pool2d [1,64,112,112] k3 s2 p1 (NHWC)" : "max_pool2d [1,64,112,112] k3 s2 p1",
          "aten::max_pool2d_with_indices.out", {&o1, &x1}, {&o2, &x2},
          [&](const std::vector<TestTensor*>& o) {
            return std::vector<EValue>{self.evalue(), k.evalue(), s.evalue(), p.evalue(),
                                       d.evalue(), EValue(false), o[0]->evalue(), o[1]->evalue()};
          },
          reps);
}

void depthwise(bool last, int64_t stride, int reps) {
  const SizesType oh = stride == 1 ? 56 : 28;
  const std::vector<SizesType> in = {1, 144, 56, 56}, out = {1, 144, oh, oh};
  TestTensor input(ScalarType::kFloat, in, kernel_test::random_float_values(144 * 56 * 56, 2),
                   order(last));
  TestTensor weight(ScalarType::kFloat, {144, 1, 3, 3}, kernel_test::random_float_values(144 * 9, 3));
  TestTensor bias(ScalarType::kFloat, {144}, kernel_test::random_float_values(144, 4));
  TestTensor o1(ScalarType::kFloat, out, {}, order(last)), o2(ScalarType::kFloat, out, {}, order(last));
  IntListArg s({stride, stride}), p({1, 1}), d({1, 1}), op({0});
  const std::string label = std::string("depthwise 3x3 [1,144,56,56] s") + std::to_string(stride) +
                            (last ? " (NHWC)" : "");
  compare(label.c_str(), "aten::convolution.out", {&o1}, {&o2},
          [&](const std::vector<TestTensor*>& o) {
            return std::vector<EValue>{input.evalue(), weight.evalue(), bias.evalue(),
                                       s.evalue(),     p.evalue(),      d.evalue(),
                                       EValue(false),  op.evalue(),     EValue(int64_t{144}),
                                       o[0]->evalue()};
          },
          reps);
}

void avg_pools(int reps) {
  const std::vector<SizesType> in = {1, 512, 7, 7}, out = {1, 512, 1, 1};
  TestTensor self(ScalarType::kFloat, in, kernel_test::random_float_values(512 * 49, 5));
  TestTensor o1(ScalarType::kFloat, out), o2(ScalarType::kFloat, out);
  IntListArg size({1, 1});
  compare("adaptive_avg_pool2d [1,512,7,7] -> 1x1", "aten::_adaptive_avg_pool2d.out", {&o1},
          {&o2},
          [&](const std::vector<TestTensor*>& o) {
            return std::vector<EValue>{self.evalue(), size.evalue(), o[0]->evalue()};
          },
          reps);
  const std::vector<SizesType> in2 = {1, 64, 56, 56};
  TestTensor self2(ScalarType::kFloat, in2, kernel_test::random_float_values(64 * 56 * 56, 6));
  TestTensor a1(ScalarType::kFloat, in2), a2(ScalarType::kFloat, in2);
  IntListArg k({3, 3}), s({1, 1}), p({1, 1});
  compare("avg_pool2d [1,64,56,56] k3 s1 p1", "aten::avg_pool2d.out", {&a1}, {&a2},
          [&](const std::vector<TestTensor*>& o) {
            return std::vector<EValue>{self2.evalue(), k.evalue(), s.evalue(), p.evalue(),
                                       EValue(false), EValue(true), EValue(), o[0]->evalue()};
          },
          reps);
}

void batch_norm(bool last, int reps) {
  const std::vector<SizesType> in = {1, 64, 112, 112};
  TestTensor input(ScalarType::kFloat, in, kernel_test::random_float_values(64 * 112 * 112, 7),
                   order(last));
  std::vector<double> var = kernel_test::random_float_values(64, 8);
  for (double& v : var) v = v * v + 0.5;
  TestTensor weight(ScalarType::kFloat, {64}, kernel_test::random_float_values(64, 9));
  TestTensor bias(ScalarType::kFloat, {64}, kernel_test::random_float_values(64, 10));
  TestTensor mean(ScalarType::kFloat, {64}, kernel_test::random_float_values(64, 11));
  TestTensor variance(ScalarType::kFloat, {64}, var);
  TestTensor o1(ScalarType::kFloat, in, {}, order(last)), o2(ScalarType::kFloat, in, {}, order(last));
  TestTensor m1(ScalarType::kFloat, {0}), m2(ScalarType::kFloat, {0});
  TestTensor v1(ScalarType::kFloat, {0}), v2(ScalarType::kFloat, {0});
  compare(last ? "batch_norm (no training) [1,64,112,112] NHWC" : "batch_norm (no training) [1,64,112,112]",
          "aten::_native_batch_norm_legit_no_training.out", {&o1, &m1, &v1}, {&o2, &m2, &v2},
          [&](const std::vector<TestTensor*>& o) {
            return std::vector<EValue>{input.evalue(), weight.evalue(), bias.evalue(),
                                       mean.evalue(),  variance.evalue(), EValue(0.1),
                                       EValue(1e-5),   o[0]->evalue(),   o[1]->evalue(),
                                       o[2]->evalue()};
          },
          reps);
}

}  // namespace
}  // namespace torchlight::portable

int main(int argc, char** argv) {
  using namespace torchlight::portable;
  const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
  std::printf("%-44s %10s %10s %9s\n", "case (float32)", "ref ms", "prep ms", "speedup");
  max_pool(false, reps);
  max_pool(true, reps);
  depthwise(false, 1, reps);
  depthwise(false, 2, reps);
  depthwise(true, 1, reps);
  avg_pools(reps);
  batch_norm(false, reps);
  batch_norm(true, reps);
  return 0;
}
