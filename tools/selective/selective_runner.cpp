// torchlight_run: a runner with only the kernels a selective build chose
// (register_selected_kernels, generated per runner by
// torchlight_selective_runner() in CMakeLists.txt), and the delegate
// backends only if its programs delegate (selected_backends).
//
//   torchlight_run MODEL.pte [--method NAME] [--input X.npy]... [--output Y.npy]...
//   torchlight_run --list-kernels
//
// Runs the method once on the inputs (in order) and writes its outputs (in
// order) to the --output files, printing each output's values. A program
// calling an operator this runner was not built with is refused at load,
// naming the operator.
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "extension/module/module.h"
#include "extension/npy/npy.h"
#include "extension/tensor/tensor_format.h"
#include "runtime/backend/backend_registry.h"
#include "runtime/kernel/kernel_registry.h"

namespace torchlight {
// Both generated per runner (selected_kernels.cpp).
Status register_selected_kernels(KernelRegistry& registry);
const BackendRegistry* selected_backends();  // Null when no program delegates.
}  // namespace torchlight

namespace {

using namespace torchlight;

int usage(const char* program) {
  std::fprintf(stderr,
               "usage: %s MODEL.pte [--method NAME] [--input X.npy]... [--output Y.npy]...\n"
               "       %s --list-kernels\n",
               program, program);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  static StaticKernelRegistry<4096> registry;  // Room for every library (the comparison runner).
  Status registered = register_selected_kernels(registry);
  if (!registered.ok()) {
    std::fprintf(stderr, "error: registering the selected kernels failed: %s\n", registered.message());
    return 1;
  }
  if (argc == 2 && std::strcmp(argv[1], "--list-kernels") == 0) {
    std::set<std::string> names;
    for (const Kernel& kernel : registry.kernels()) names.insert(kernel.name);
    for (const std::string& name : names) std::printf("%s\n", name.c_str());
    return 0;
  }
  if (argc < 2 || argv[1][0] == '-') return usage(argv[0]);
  std::string method = "forward";
  std::vector<std::string> inputs, outputs;
  for (int i = 2; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--method") == 0 && has_value) {
      method = argv[++i];
    } else if (std::strcmp(argv[i], "--input") == 0 && has_value) {
      inputs.push_back(argv[++i]);
    } else if (std::strcmp(argv[i], "--output") == 0 && has_value) {
      outputs.push_back(argv[++i]);
    } else {
      std::fprintf(stderr, "error: unknown or incomplete option '%s'\n", argv[i]);
      return usage(argv[0]);
    }
  }

  std::vector<OwnedTensor> owned;
  std::vector<EValue> values;
  for (const std::string& path : inputs) {
    Result<OwnedTensor> tensor = read_npy(path);
    if (!tensor.ok()) {
      std::fprintf(stderr, "error: input '%s': %s\n", path.c_str(), tensor.status().message());
      return 1;
    }
    owned.push_back(std::move(tensor.get()));
  }
  for (const OwnedTensor& tensor : owned) values.emplace_back(tensor.tensor());

  Module module(argv[1], Module::LoadMode::kFile, registry, selected_backends());
  Result<std::vector<EValue>> result = module.execute(method, values);
  if (!result.ok()) {
    std::fprintf(stderr, "error: %s\n", result.status().message());
    return 1;
  }
  const std::vector<EValue>& out = result.get();
  if (outputs.size() > out.size()) {
    std::fprintf(stderr, "error: %zu --output files for %zu outputs\n", outputs.size(), out.size());
    return 1;
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i].is_tensor()) {
      std::printf("output %zu: (not a tensor)\n", i);
      continue;
    }
    std::printf("output %zu: %s\n", i, format_values(out[i].to_tensor(), 16).c_str());
    if (i < outputs.size()) {
      Status written = write_npy(outputs[i], out[i].to_tensor());
      if (!written.ok()) {
        std::fprintf(stderr, "error: output '%s': %s\n", outputs[i].c_str(), written.message());
        return 1;
      }
    }
  }
  return 0;
}
