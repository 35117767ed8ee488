// Fuzz target: the LLM runner's metadata path, read_llm_metadata over a
// Module, which runs each get_* constant method the program has. Module
// reads files, so the input goes through one temporary file per process.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "extension/llm/runner/llm_metadata.h"
#include "extension/module/module.h"

namespace {

const std::string& temp_path() {
  static const std::string path = [] {
    const char* dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    return std::string(dir) + "/torchlight_fuzz_llm_metadata." + std::to_string(getpid()) + ".pte";
  }();
  return path;
}

bool write_file(const std::string& path, const uint8_t* data, size_t size) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const bool ok = size == 0 || std::fwrite(data, 1, size, f) == size;
  return std::fclose(f) == 0 && ok;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torchlight;
  if (!write_file(temp_path(), data, size)) std::abort();  // The harness's problem, not the input's.
  {
    Module module(temp_path(), Module::LoadMode::kFile);
    module.set_planned_memory_limit(size_t{64} << 20);  // The fuzzer's 2 GiB budget.
    module.set_max_steps(100000);  // As program_runner: a looping program ends well within 1 s.
    Result<LlmMetadata> metadata = read_llm_metadata(&module);
    if (metadata.ok()) {
      volatile size_t n = metadata.get().eos_ids.size() + metadata.get().tokenizer.size();
      (void)n;
    }
  }
  std::remove(temp_path().c_str());
  return 0;
}
