// Upstream path; see compat/README.md.
#pragma once

namespace executorch::runtime {
/// Upstream initialises its platform layer here; Torchlight's needs no
/// set-up, so this only keeps upstream's call sites compiling.
inline void runtime_init() {}
}  // namespace executorch::runtime
