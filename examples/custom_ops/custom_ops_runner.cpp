// Runs a program that calls my_ops::my_op, written as upstream's guide
// writes a runner: Module's default form finds the custom kernel because
// my_op.cpp's EXECUTORCH_LIBRARY registered it (the object is linked whole).
//
//   custom_ops_runner MODEL.pte INPUT.npy OUTPUT.npy
//
// Reads forward's one input from INPUT.npy and writes its first output.
#include <cstdio>

#include <executorch/extension/module/module.h>
#include <executorch/runtime/platform/runtime.h>

#include "extension/npy/npy.h"

using executorch::extension::Module;
using executorch::runtime::EValue;

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s MODEL.pte INPUT.npy OUTPUT.npy\n", argv[0]);
    return 2;
  }
  executorch::runtime::runtime_init();
  torchlight::Result<torchlight::OwnedTensor> input = torchlight::read_npy(argv[2]);
  if (!input.ok()) {
    std::fprintf(stderr, "error: %s\n", input.status().message());
    return 1;
  }
  Module module(argv[1]);
  auto outputs = module.forward({EValue(input.get().tensor())});
  if (!outputs.ok()) {
    std::fprintf(stderr, "error: %s\n", outputs.status().message());
    return 1;
  }
  torchlight::Status written = torchlight::write_npy(argv[3], outputs.get()[0].toTensor());
  if (!written.ok()) {
    std::fprintf(stderr, "error: %s\n", written.message());
    return 1;
  }
  return 0;
}
