// ArgParser: the small command-line parser the subcommands share.
//
// Accepts `--name value`, `--name=value`, boolean `--name`, `-h`/`--help`,
// positionals, and `--` to end the options. Unknown options, a missing
// value and a repeated single-use option are errors, so a typo never
// silently falls back to a default.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/result.h"

namespace torchlight {
namespace cli {

struct OptionSpec {
  std::string name;          // Without the leading "--", e.g. "repeat".
  bool takes_value = true;   // False for a flag.
  bool repeatable = false;   // May be given more than once (e.g. --input).
};

class ArgParser {
 public:
  /// `command` is used in messages ("run: unknown option --x").
  ArgParser(std::string command, std::vector<OptionSpec> options);

  /// Parses `args` (the words after the subcommand). Errors:
  /// kInvalidArgument for an unknown option, a missing value, a value given
  /// to a flag, or a non-repeatable option given twice.
  Status parse(const std::vector<std::string>& args);

  bool help_requested() const { return help_; }
  bool has(std::string_view name) const;
  /// The last value of `name`, or `fallback` when it was not given.
  const std::string& value(std::string_view name, const std::string& fallback) const;
  /// Every value of `name`, in order; empty when not given.
  const std::vector<std::string>& values(std::string_view name) const;
  const std::vector<std::string>& positionals() const { return positionals_; }

 private:
  const OptionSpec* find(std::string_view name) const;

  std::string command_;
  std::vector<OptionSpec> options_;
  std::map<std::string, std::vector<std::string>, std::less<>> given_;
  std::vector<std::string> positionals_;
  bool help_ = false;
};

/// Parses a whole decimal integer in [min, max] for option `option`.
/// Errors: kInvalidArgument naming the option, the text and the range.
Result<int64_t> parse_int_option(std::string_view option, const std::string& text, int64_t min,
                                 int64_t max);

/// Parses a finite decimal number in [min, max] for option `option`.
/// Errors: kInvalidArgument naming the option, the text and the range.
Result<double> parse_double_option(std::string_view option, const std::string& text, double min,
                                   double max);

/// Parses a whole decimal unsigned integer (a seed). Errors: kInvalidArgument.
Result<uint64_t> parse_uint64_option(std::string_view option, const std::string& text);

/// Returns the index of `text` in `choices`. Errors: kInvalidArgument listing
/// the choices.
Result<size_t> parse_choice_option(std::string_view option, const std::string& text,
                                   const std::vector<std::string>& choices);

}  // namespace cli
}  // namespace torchlight
