// Writes the name of every kernel this runtime build registers
// (all_kernels()), one per line, sorted, to the file named by argv[1] (or
// stdout). The build runs it to make build/<cfg>/registered_kernels.txt,
// which the Python exporter reads to reject programs that call operators
// this runtime cannot run.
#include <cstdio>
#include <set>
#include <string>

#include "kernels/all_kernels.h"

int main(int argc, char** argv) {
  if (argc > 2) {
    std::fprintf(stderr, "usage: %s [OUTPUT_FILE]\n", argv[0]);
    return 2;
  }
  torchlight::Result<const torchlight::KernelRegistry*> kernels = torchlight::all_kernels();
  if (!kernels.ok()) {
    std::fprintf(stderr, "error: building the kernel registry failed: %s\n",
                 kernels.status().message());
    return 1;
  }
  std::set<std::string> names;  // Several kernels (dtypes, tiers) may share a name.
  for (const torchlight::Kernel& kernel : kernels.get()->kernels()) names.insert(kernel.name);

  std::string text = "# Kernels registered in this runtime build (tools/kernel_list).\n";
  for (const std::string& name : names) text += name + "\n";
  FILE* out = argc == 2 ? std::fopen(argv[1], "w") : stdout;
  if (out == nullptr) {
    std::fprintf(stderr, "error: cannot write '%s'\n", argv[1]);
    return 1;
  }
  const bool written = std::fwrite(text.data(), 1, text.size(), out) == text.size();
  const bool closed = out == stdout ? std::fflush(out) == 0 : std::fclose(out) == 0;
  if (!written || !closed) {
    std::fprintf(stderr, "error: writing the kernel list failed\n");
    return 1;
  }
  return 0;
}
