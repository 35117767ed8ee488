#include "tools/cli/inspect_command.h"

#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

#include "extension/module/module.h"
#include "tools/cli/arg_parser.h"
#include "tools/cli/cli_report.h"

namespace torchlight {
namespace cli {
namespace {

// Every line is "<indent><label padded to kLabelWidth><value>".
constexpr int kLabelWidth = 20;

void row(int indent, const std::string& label, const std::string& value) {
  std::printf("%*s%-*s%s\n", indent, "", kLabelWidth - indent, label.c_str(), value.c_str());
}

std::string plural(uint64_t n, const char* one, const char* many) {
  return with_commas(n) + " " + (n == 1 ? one : many);
}

// The file-wide facts: header, segments, constants, named data.
Status print_program(const std::string& path, const Program& program,
                     const std::vector<std::string>& methods) {
  std::error_code ec;
  const uintmax_t file_size = std::filesystem::file_size(path, ec);
  std::printf("%s%s\n", path.c_str(),
              ec ? "" : (": " + plural(file_size, "byte", "bytes")).c_str());
  row(2, "format", "ET12, schema version " + std::to_string(program.version()));
  const ProgramHeader& header = program.header();
  if (header.present) {
    row(2, "extended header",
        "eh00, " + plural(header.length, "byte", "bytes") + "; program " +
            plural(header.program_size, "byte", "bytes") + ", segment base " +
            with_commas(header.segment_base_offset) + ", segment data " +
            (header.has_segment_data_size ? plural(header.segment_data_size, "byte", "bytes")
                                          : std::string("size not recorded (to the file end)")));
  } else {
    row(2, "extended header", "none (all data inline)");
  }
  const uint64_t constants = program.constant_bytes();
  if (constants == 0) {
    row(2, "constants", "none");
  } else {
    row(2, "constants",
        plural(constants, "byte", "bytes") +
            (program.uses_legacy_constant_buffer() ? " (legacy inline constant_buffer)"
                                                   : " (constant segment)"));
  }
  row(2, "segments", std::to_string(program.num_segments()));
  for (size_t i = 0; i < program.num_segments(); ++i) {
    TL_ASSIGN_OR_RETURN(ProgramSegment segment, program.segment(i));
    row(4, "segment " + std::to_string(i),
        plural(segment.size, "byte", "bytes") + " at offset " + with_commas(segment.offset));
  }
  row(2, "named data", plural(program.num_named_data(), "entry", "entries"));
  std::string names;
  for (const std::string& name : methods) names += (names.empty() ? "" : ", ") + name;
  row(2, "methods", std::to_string(methods.size()) + (names.empty() ? "" : " (" + names + ")"));
  return Error::kOk;
}

// One value slot (input or output) of a method.
Status print_value(const MethodMeta& meta, size_t index, bool is_input) {
  TL_ASSIGN_OR_RETURN(Tag tag, is_input ? meta.input_tag(index) : meta.output_tag(index));
  std::string text = to_string(tag);
  if (tag == Tag::kTensor) {
    TL_ASSIGN_OR_RETURN(TensorInfo info, is_input ? meta.input_tensor_info(index)
                                                  : meta.output_tensor_info(index));
    text = "Tensor " + describe_tensor_info(info) + ", " + plural(info.nbytes, "byte", "bytes") +
           (info.memory_planned ? ", planned" : ", not planned");
  }
  row(4, std::to_string(index), text);
  return Error::kOk;
}

Status print_method(const MethodMeta& meta) {
  std::printf("\nmethod %.*s\n", static_cast<int>(meta.name().size()), meta.name().data());
  row(2, "inputs", std::to_string(meta.num_inputs()));
  for (size_t i = 0; i < meta.num_inputs(); ++i) TL_RETURN_IF_ERROR(print_value(meta, i, true));
  row(2, "outputs", std::to_string(meta.num_outputs()));
  for (size_t i = 0; i < meta.num_outputs(); ++i) TL_RETURN_IF_ERROR(print_value(meta, i, false));

  row(2, "operators", std::to_string(meta.num_operators()));
  for (size_t i = 0; i < meta.num_operators(); ++i) {
    char name[256];
    TL_ASSIGN_OR_RETURN(const char* op, meta.operator_name(i, name, sizeof(name)));
    row(4, std::to_string(i), op);
  }
  row(2, "delegates", meta.num_backends() == 0 ? "none" : std::to_string(meta.num_backends()));
  for (size_t i = 0; i < meta.num_backends(); ++i) {
    TL_ASSIGN_OR_RETURN(std::string_view backend, meta.backend_name(i));
    row(4, std::to_string(i), std::string(backend));
  }

  uint64_t planned_total = 0;
  for (size_t i = 0; i < meta.num_planned_buffers(); ++i) {
    TL_ASSIGN_OR_RETURN(int64_t size, meta.planned_buffer_size(i));
    planned_total += static_cast<uint64_t>(size);
  }
  row(2, "planned memory",
      plural(planned_total, "byte", "bytes") + " in " +
          plural(meta.num_planned_buffers(), "buffer", "buffers"));
  for (size_t i = 0; i < meta.num_planned_buffers(); ++i) {
    TL_ASSIGN_OR_RETURN(int64_t size, meta.planned_buffer_size(i));
    row(4, "buffer " + std::to_string(i),
        plural(static_cast<uint64_t>(size), "byte", "bytes"));
  }
  row(2, "values", std::to_string(meta.num_values()));
  row(2, "instructions", std::to_string(meta.num_instructions()));
  return Error::kOk;
}

// One value of a constant method, as text.
std::string describe_value(const EValue& value) {
  if (value.is_int()) return std::to_string(value.to_int());
  if (value.is_bool()) return value.to_bool() ? "true" : "false";
  if (value.is_double()) {
    char text[32];
    std::snprintf(text, sizeof(text), "%g", value.to_double());
    return text;
  }
  if (value.is_string()) return "\"" + std::string(value.to_string()) + "\"";
  if (value.is_none()) return "None";
  return to_string(value.tag());
}

// Methods that only return constants (no inputs, no instructions), such as
// an LLM's get_max_seq_len(), with their values: running them computes
// nothing, so inspect still runs no model code.
Status print_metadata(Module& module, const std::vector<std::string>& methods) {
  bool any = false;
  for (const std::string& name : methods) {
    TL_ASSIGN_OR_RETURN(MethodMeta meta, module.method_meta(name));
    if (meta.num_inputs() != 0 || meta.num_instructions() != 0) continue;
    if (!any) std::printf("\nmetadata\n");
    any = true;
    Result<std::vector<EValue>> outputs = module.execute(name);
    if (!outputs.ok()) {
      Status s = outputs.status();
      return s.with_context("running constant method '%s'", name.c_str());
    }
    std::string text;
    for (const EValue& value : outputs.get()) {
      text += (text.empty() ? "" : ", ") + describe_value(value);
    }
    // Wider than row()'s labels: names such as use_sdpa_with_kv_cache.
    std::printf("  %-24s %s\n", name.c_str(),
                (outputs->size() == 1 ? text : "[" + text + "]").c_str());
  }
  return Error::kOk;
}

}  // namespace

const char* inspect_usage() {
  return "usage: torchlight inspect MODEL.pte\n"
         "\n"
         "Prints what a program file contains, without running it: the format\n"
         "version and extended header, segments and their sizes, constant bytes,\n"
         "and for each method its inputs and outputs (dtype and shape; dynamic\n"
         "dims are shown as upper bounds, e.g. [<=8, <=3]), operators, delegates,\n"
         "planned memory, and value and instruction counts; then the values of\n"
         "the methods that only return constants (an LLM's metadata, such as\n"
         "get_max_seq_len or use_kv_cache).\n"
         "\n"
         "options:\n"
         "  -h, --help   show this help\n";
}

int inspect_command(const std::vector<std::string>& args) {
  ArgParser parser("inspect", {});
  Status parsed = parser.parse(args);
  if (!parsed.ok()) return report_error("", parsed);
  if (parser.help_requested()) {
    std::fputs(inspect_usage(), stdout);
    return 0;
  }
  if (parser.positionals().size() != 1) {
    return report_error("", "inspect takes exactly one MODEL.pte, got " +
                                std::to_string(parser.positionals().size()) +
                                " (see 'torchlight inspect --help')");
  }
  const std::string& path = parser.positionals()[0];

  Module module(path, Module::LoadMode::kMmap);
  Status loaded = module.load();
  if (!loaded.ok()) return report_error(path, loaded);
  Result<std::vector<std::string>> methods = module.ordered_method_names();
  if (!methods.ok()) return report_error(path, methods.status());

  Status status = print_program(path, *module.program(), methods.get());
  for (size_t i = 0; status.ok() && i < methods->size(); ++i) {
    Result<MethodMeta> meta = module.method_meta((*methods)[i]);
    status = meta.ok() ? print_method(meta.get()) : meta.status();
  }
  if (status.ok()) status = print_metadata(module, methods.get());
  std::fflush(stdout);
  if (!status.ok()) return report_error(path, status);
  return 0;
}

}  // namespace cli
}  // namespace torchlight
