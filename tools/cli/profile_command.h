// `torchlight profile MODEL.pte ...`: runs a method with an ETDump tracer
// and prints the per-operator table (delegate events under their
// DELEGATE_CALL), then the load and execute times.
#pragma once

#include <string>
#include <vector>

namespace torchlight {
namespace cli {

/// Runs the subcommand on `args` (the words after "profile"). Returns 0, or
/// prints one `error:` line on stderr and returns 1.
int profile_command(const std::vector<std::string>& args);

/// The text of `torchlight profile --help`.
const char* profile_usage();

}  // namespace cli
}  // namespace torchlight
