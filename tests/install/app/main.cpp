// A small application written the way upstream ExecuTorch's guide writes one
// (its includes, namespaces and Module calls), built against an installed
// Torchlight. It runs one program and checks the output itself:
//
//   install_app add.pte                       a + b with a = 2.5, b = 4.0
//   install_app MODEL INPUT.bin EXPECTED.bin  one float32 input, raw
//                                             little-endian, against the
//                                             expected (eager PyTorch) output
//
// Exit status 0 only when the output matches.
#include <executorch/extension/module/module.h>
#include <executorch/extension/tensor/tensor.h>
#include <executorch/runtime/platform/runtime.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace ::executorch::extension;
using ::executorch::aten::Tensor;

namespace {

bool read_floats(const char* path, std::vector<float>* values) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot open %s\n", path);
    return false;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  values->resize(bytes.size() / sizeof(float));
  std::memcpy(values->data(), bytes.data(), values->size() * sizeof(float));
  return true;
}

// Compares with a relative tolerance of 1e-4: XNNPACK's kernels round
// differently from eager PyTorch's, well inside that.
bool matches(const Tensor& out, const std::vector<float>& expected) {
  if (static_cast<size_t>(out.numel()) != expected.size()) {
    std::fprintf(stderr, "output has %zu elements, expected %zu\n",
                 static_cast<size_t>(out.numel()), expected.size());
    return false;
  }
  const float* got = out.const_data_ptr<float>();
  bool ok = true;
  for (size_t i = 0; i < expected.size(); ++i) {
    std::printf("out[%zu] = %.6f (expected %.6f)\n", i, got[i], expected[i]);
    if (!(std::fabs(got[i] - expected[i]) <= 1e-4 * (1.0 + std::fabs(expected[i])))) {
      ok = false;
    }
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 4) {
    std::fprintf(stderr, "usage: %s add.pte | MODEL INPUT.bin EXPECTED.bin\n", argv[0]);
    return 2;
  }
  ::executorch::runtime::runtime_init();
  Module module(argv[1]);

  std::vector<float> expected;
  auto check = [&expected](const auto& result) {
    if (!result.ok()) {
      std::fprintf(stderr, "forward failed: %s\n", result.status().message());
      return false;
    }
    if (!matches(result->at(0).toTensor(), expected)) {
      std::fprintf(stderr, "output differs from the expected values\n");
      return false;
    }
    return true;
  };
  if (argc == 2) {
    auto a = make_tensor_ptr({1}, {2.5f});
    auto b = make_tensor_ptr({1}, {4.0f});
    expected = {2.5f + 4.0f};
    if (!check(module.forward({a, b}))) {
      return 1;
    }
  } else {
    std::vector<float> input;
    if (!read_floats(argv[2], &input) || !read_floats(argv[3], &expected)) {
      return 1;
    }
    // The one model this form is used with takes float32[2, n/2].
    auto x = from_blob(input.data(), {2, static_cast<int>(input.size() / 2)});
    if (!check(module.forward(x))) {
      return 1;
    }
  }
  std::printf("ok\n");
  return 0;
}
