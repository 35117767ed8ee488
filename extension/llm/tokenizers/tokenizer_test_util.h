// Test-only helpers shared by the tokenizer tests: the asset cache written
// by tools/llm_assets/fetch_tokenizer_assets.sh, the shared text set, and
// temporary files.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace torchlight {
namespace testing {

#ifdef TORCHLIGHT_LLM_ASSETS_DIR
/// The asset cache: $TORCHLIGHT_ASSETS_DIR, else the CMake setting.
inline std::string tokenizer_assets_dir() {
  const char* env = getenv("TORCHLIGHT_ASSETS_DIR");
  return std::string(env != nullptr && env[0] != '\0' ? env : TORCHLIGHT_LLM_ASSETS_DIR) +
         "/tokenizers";
}
#endif

inline bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

/// Skips the test when `path` is missing, unless running under CI, where a
/// missing asset means the fetch step did not run and is a failure.
#define TL_REQUIRE_ASSET(path)                                                          \
  do {                                                                                  \
    if (!::torchlight::testing::file_exists(path)) {                                    \
      if (getenv("CI") != nullptr) {                                                    \
        FAIL() << "missing " << (path) << ": run tools/llm_assets/fetch_tokenizer_assets.sh"; \
      }                                                                                 \
      GTEST_SKIP() << "missing " << (path)                                              \
                   << ": run tools/llm_assets/fetch_tokenizer_assets.sh on the host";   \
    }                                                                                   \
  } while (0)

inline std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The shared text set (testdata/tokenizer_texts.json).
inline std::vector<std::string> tokenizer_texts() {
  return nlohmann::json::parse(read_text_file(TORCHLIGHT_TOKENIZER_TEXTS)).get<std::vector<std::string>>();
}

inline std::string hex_decode(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

/// A readable rendering of text for failure messages.
inline std::string show(const std::string& s) { return nlohmann::json(s).dump(); }

/// A file under /tmp with given contents, removed on destruction.
class TempFile {
 public:
  explicit TempFile(const std::string& contents) {
    char name[] = "/tmp/torchlight_tok_XXXXXX";
    const int fd = ::mkstemp(name);
    if (fd < 0) return;
    path_ = name;
    size_t done = 0;
    while (done < contents.size()) {
      const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::close(fd);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace testing
}  // namespace torchlight
