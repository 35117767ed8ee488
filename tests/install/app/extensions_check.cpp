// Links Torchlight::llm and Torchlight::npy from an install and uses one
// function of each, so a library missing from the install, or listed in the
// wrong link order, fails here rather than in a user's build.
#include "extension/llm/runner/tokenizer_loader.h"
#include "extension/npy/npy.h"
#include "extension/tensor/owned_tensor.h"

#include <cstdio>
#include <vector>

int main() {
  using namespace torchlight;

  // The byte tokenizer maps id b to the byte b.
  auto loaded = load_tokenizer("bytes");
  if (!loaded.ok()) {
    std::fprintf(stderr, "load_tokenizer(bytes) failed\n");
    return 1;
  }
  auto piece = loaded->tokenizer->decode(0, 'h');
  if (!piece.ok() || *piece != "h") {
    std::fprintf(stderr, "byte tokenizer decoded id 'h' wrongly\n");
    return 1;
  }
  if (load_tokenizer("/nonexistent/tokenizer.model").ok()) {
    std::fprintf(stderr, "a missing tokenizer file loaded\n");
    return 1;
  }

  // A tensor survives .npy encoding and decoding.
  const std::vector<float> values = {1.5f, -2.0f, 3.25f};
  auto tensor = OwnedTensor::from_values<float>({3}, Span<const float>(values.data(), values.size()));
  if (!tensor.ok()) {
    return 1;
  }
  auto bytes = encode_npy(tensor->tensor());
  if (!bytes.ok()) {
    std::fprintf(stderr, "encode_npy failed\n");
    return 1;
  }
  auto back = read_npy_bytes(Span<const uint8_t>(bytes->data(), bytes->size()));
  if (!back.ok() || back->tensor().numel() != 3) {
    std::fprintf(stderr, "read_npy_bytes failed\n");
    return 1;
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (back->tensor().const_data_ptr<float>()[i] != values[i]) {
      std::fprintf(stderr, "npy round trip changed element %zu\n", i);
      return 1;
    }
  }
  std::printf("extensions ok\n");
  return 0;
}
