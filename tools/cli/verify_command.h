// `torchlight verify FILE.bpte`: runs every test case of a bundled program
// and compares the outputs with the expected ones within the tolerances.
#pragma once

#include <string>
#include <vector>

namespace torchlight {
namespace cli {

/// Runs the subcommand on `args` (the words after "verify"). Prints one
/// line per test case and a summary; returns 0 when every case passed, 1
/// when one failed (naming the method and case) or the file cannot be used.
int verify_command(const std::vector<std::string>& args);

/// The text of `torchlight verify --help`.
const char* verify_usage();

}  // namespace cli
}  // namespace torchlight
