// `torchlight run MODEL.pte ...`: runs one method on .npy or generated
// inputs, prints and saves the outputs, and reports load time and latency.
#pragma once

#include <string>
#include <vector>

namespace torchlight {
namespace cli {

/// Runs the subcommand on `args` (the words after "run"). Returns 0, or
/// prints one `error:` line on stderr and returns 1.
int run_command(const std::vector<std::string>& args);

/// The text of `torchlight run --help`.
const char* run_usage();

}  // namespace cli
}  // namespace torchlight
