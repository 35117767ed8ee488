// The upstream-written fixtures (tests/fixtures/upstream, see its README) for
// tests: their paths, and the raw little-endian float32 files that hold the
// MLP's input and PyTorch eager's output. TORCHLIGHT_FIXTURES_DIR comes from
// torchlight_add_gtest.
#pragma once

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace torchlight::testing {

inline std::string upstream_fixture(const char* name) {
  return std::string(TORCHLIGHT_FIXTURES_DIR) + "/" + name;
}

/// The file's bytes as float32 values (empty if it cannot be read).
inline std::vector<float> read_float_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  return values;
}

}  // namespace torchlight::testing
