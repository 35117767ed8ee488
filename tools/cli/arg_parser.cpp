#include "tools/cli/arg_parser.h"

#include <cerrno>
#include <cstdlib>
#include <utility>

namespace torchlight {
namespace cli {

ArgParser::ArgParser(std::string command, std::vector<OptionSpec> options)
    : command_(std::move(command)), options_(std::move(options)) {}

const OptionSpec* ArgParser::find(std::string_view name) const {
  for (const OptionSpec& spec : options_) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

Status ArgParser::parse(const std::vector<std::string>& args) {
  bool options_ended = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (options_ended || arg.size() < 2 || arg[0] != '-') {
      positionals_.push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_ended = true;
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      help_ = true;
      continue;
    }
    if (arg.compare(0, 2, "--") != 0) {
      return Status::error(Error::kInvalidArgument, "%s: unknown option '%s'", command_.c_str(),
                           arg.c_str());
    }
    const size_t equals = arg.find('=');
    const std::string name = arg.substr(2, equals == std::string::npos ? std::string::npos
                                                                        : equals - 2);
    const OptionSpec* spec = find(name);
    if (spec == nullptr) {
      return Status::error(Error::kInvalidArgument, "%s: unknown option '--%s'", command_.c_str(),
                           name.c_str());
    }
    std::string value;
    if (!spec->takes_value) {
      if (equals != std::string::npos) {
        return Status::error(Error::kInvalidArgument, "%s: option '--%s' takes no value",
                             command_.c_str(), name.c_str());
      }
    } else if (equals != std::string::npos) {
      value = arg.substr(equals + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return Status::error(Error::kInvalidArgument, "%s: option '--%s' needs a value",
                           command_.c_str(), name.c_str());
    }
    std::vector<std::string>& slot = given_[name];
    if (!spec->repeatable && !slot.empty()) {
      return Status::error(Error::kInvalidArgument, "%s: option '--%s' was given more than once",
                           command_.c_str(), name.c_str());
    }
    slot.push_back(std::move(value));
  }
  return Error::kOk;
}

bool ArgParser::has(std::string_view name) const { return given_.find(name) != given_.end(); }

const std::string& ArgParser::value(std::string_view name, const std::string& fallback) const {
  auto it = given_.find(name);
  return it == given_.end() || it->second.empty() ? fallback : it->second.back();
}

const std::vector<std::string>& ArgParser::values(std::string_view name) const {
  static const std::vector<std::string> kNone;
  auto it = given_.find(name);
  return it == given_.end() ? kNone : it->second;
}

Result<int64_t> parse_int_option(std::string_view option, const std::string& text, int64_t min,
                                 int64_t max) {
  char* end = nullptr;
  errno = 0;
  const long long parsed = text.empty() ? 0 : std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || parsed < min || parsed > max) {
    return Status::error(Error::kInvalidArgument,
                         "--%.*s must be an integer from %lld to %lld, got '%s'",
                         static_cast<int>(option.size()), option.data(),
                         static_cast<long long>(min), static_cast<long long>(max), text.c_str());
  }
  return static_cast<int64_t>(parsed);
}

Result<double> parse_double_option(std::string_view option, const std::string& text, double min,
                                   double max) {
  char* end = nullptr;
  errno = 0;
  const double parsed = text.empty() ? 0.0 : std::strtod(text.c_str(), &end);
  // `!(x >= min)` also rejects NaN.
  if (text.empty() || *end != '\0' || errno == ERANGE || !(parsed >= min) || !(parsed <= max)) {
    return Status::error(Error::kInvalidArgument, "--%.*s must be a number from %g to %g, got '%s'",
                         static_cast<int>(option.size()), option.data(), min, max, text.c_str());
  }
  return parsed;
}

Result<uint64_t> parse_uint64_option(std::string_view option, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  // strtoull accepts a leading '-' and wraps; reject it explicitly.
  const bool digits_first = !text.empty() && text[0] >= '0' && text[0] <= '9';
  const unsigned long long parsed = digits_first ? std::strtoull(text.c_str(), &end, 10) : 0;
  if (!digits_first || *end != '\0' || errno == ERANGE) {
    return Status::error(Error::kInvalidArgument,
                         "--%.*s must be a non-negative integer below 2^64, got '%s'",
                         static_cast<int>(option.size()), option.data(), text.c_str());
  }
  return static_cast<uint64_t>(parsed);
}

Result<size_t> parse_choice_option(std::string_view option, const std::string& text,
                                   const std::vector<std::string>& choices) {
  std::string listed;
  for (size_t i = 0; i < choices.size(); ++i) {
    if (choices[i] == text) return i;
    listed += (i == 0 ? "" : ", ") + choices[i];
  }
  return Status::error(Error::kInvalidArgument, "--%.*s must be one of %s, got '%s'",
                       static_cast<int>(option.size()), option.data(), listed.c_str(),
                       text.c_str());
}

}  // namespace cli
}  // namespace torchlight
