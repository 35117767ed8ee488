// `torchlight inspect MODEL.pte`: what a program contains, without running it.
#pragma once

#include <string>
#include <vector>

namespace torchlight {
namespace cli {

/// Runs the subcommand on `args` (the words after "inspect"). Prints the
/// report on stdout and returns 0, or prints one `error:` line on stderr and
/// returns 1.
int inspect_command(const std::vector<std::string>& args);

/// The text of `torchlight inspect --help`.
const char* inspect_usage();

}  // namespace cli
}  // namespace torchlight
