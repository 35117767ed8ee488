#include "tools/cli/run_command.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>

#include "extension/module/module.h"
#include "extension/npy/npy.h"
#include "extension/tensor/owned_tensor.h"
#include "extension/tensor/tensor_fill.h"
#include "extension/tensor/tensor_format.h"
#include "tools/cli/arg_parser.h"
#include "tools/cli/cli_report.h"
#include "tools/cli/etdump_capture.h"
#include "tools/cli/timing.h"

namespace torchlight {
namespace cli {
namespace {

constexpr int kLabelWidth = 10;
constexpr size_t kLeadingValues = 8;     // Values printed per output.
constexpr int64_t kMaxRepeat = 1000000;  // Keeps a typo from running for hours.
constexpr const char* kKeepProgramValue = "-";

// One method input as it will be passed to set_input on every run.
struct PreparedInput {
  std::vector<OwnedTensor> storage;  // Empty, or the one tensor `value` borrows.
  EValue value;
  std::string file;    // The --input file, or empty.
  std::string source;  // What the user sees: dtype, shape and origin.
};

void row(const std::string& label, const std::string& value) {
  std::printf("%-*s %s\n", kLabelWidth - 1, label.c_str(), value.c_str());
}

// Sub-millisecond times in microseconds, so small models keep their digits.
std::string ms(double value) {
  char text[32];
  if (value < 1.0) {
    std::snprintf(text, sizeof(text), "%.1f us", value * 1000.0);
  } else {
    std::snprintf(text, sizeof(text), "%.3f ms", value);
  }
  return text;
}

}  // namespace

std::vector<OptionSpec> run_option_specs() {
  return {{"method"}, {"input", true, true}, {"repeat"}, {"fill"}, {"seed"}, {"load-mode"}};
}

Result<RunOptions> parse_run_options(const ArgParser& parser, const char* command) {
  RunOptions options;
  if (parser.positionals().size() != 1) {
    return Status::error(Error::kInvalidArgument,
                         "%s takes exactly one MODEL.pte, got %zu (see 'torchlight %s --help')",
                         command, parser.positionals().size(), command);
  }
  options.model = parser.positionals()[0];
  options.method = parser.value("method", "");
  options.inputs = parser.values("input");
  if (parser.has("repeat")) {
    TL_ASSIGN_OR_RETURN(options.repeat,
                        parse_int_option("repeat", parser.value("repeat", ""), 1, kMaxRepeat));
  }
  if (parser.has("fill")) {
    TL_ASSIGN_OR_RETURN(size_t fill, parse_choice_option("fill", parser.value("fill", ""),
                                                         {"zeros", "ones", "random"}));
    options.fill = static_cast<Fill>(fill);
  }
  if (parser.has("seed")) {
    TL_ASSIGN_OR_RETURN(options.seed, parse_uint64_option("seed", parser.value("seed", "")));
  }
  if (parser.has("load-mode")) {
    TL_ASSIGN_OR_RETURN(size_t mode, parse_choice_option("load-mode", parser.value("load-mode", ""),
                                                         {"file", "mmap", "mlock"}));
    const Module::LoadMode modes[] = {Module::LoadMode::kFile, Module::LoadMode::kMmap,
                                      Module::LoadMode::kMmapUseMlock};
    options.load_mode = modes[mode];
    options.load_mode_name = parser.value("load-mode", "");
  }
  return options;
}

namespace {

// The method to run: the one asked for, else "forward", else the first.
Result<std::string> choose_method(Module& module, const RunOptions& options) {
  if (!options.method.empty()) return options.method;
  TL_ASSIGN_OR_RETURN(std::vector<std::string> names, module.ordered_method_names());
  TL_CHECK_OR_RETURN(!names.empty(), Error::kInvalidProgram, "the program has no methods");
  for (const std::string& name : names) {
    if (name == "forward") return name;
  }
  return names[0];
}

// Checks a tensor read from `file` against what input `index` expects, so
// the message shows both shapes (set_input checks again, and also layout).
Status check_tensor_input(const std::string& file, const std::string& model, size_t index,
                          const std::string& method, const TensorInfo& info,
                          const OwnedTensor& given) {
  bool fits = given.scalar_type() == info.dtype && given.dim() == info.sizes.size();
  for (size_t d = 0; fits && d < given.dim(); ++d) {
    const SizesType got = given.sizes()[d];
    switch (info.dynamism) {
      case TensorShapeDynamism::kStatic:
        fits = got == info.sizes[d];
        break;
      case TensorShapeDynamism::kDynamicBound:
        fits = got <= info.sizes[d];
        break;
      case TensorShapeDynamism::kDynamicUnbound:
        break;
    }
  }
  if (fits) return Error::kOk;
  const Error code = given.scalar_type() != info.dtype ? Error::kInvalidType
                                                       : Error::kInvalidArgument;
  return Status::error(code, "%s: input %zu of method '%s' in %s must be %s, got %s %s",
                       file.c_str(), index, method.c_str(), model.c_str(),
                       describe_tensor_info(info).c_str(), to_string(given.scalar_type()),
                       describe_sizes(given.sizes()).c_str());
}

// `source` (contiguous, as read from .npy) copied into `dim_order`, the
// layout the program expects, keeping each element at its logical index.
Result<OwnedTensor> with_dim_order(const OwnedTensor& source,
                                   const std::vector<DimOrderType>& dim_order,
                                   TensorShapeDynamism dynamism) {
  std::vector<SizesType> sizes(source.sizes().begin(), source.sizes().end());
  TL_ASSIGN_OR_RETURN(OwnedTensor out, OwnedTensor::make_with_dim_order(
                                           source.scalar_type(), sizes, dim_order, dynamism));
  const Tensor dst = out.tensor();
  const size_t element = dst.element_size();
  const auto* from = static_cast<const uint8_t*>(source.tensor().const_data_ptr());
  auto* to = static_cast<uint8_t*>(dst.mutable_data_ptr());
  std::vector<SizesType> index(sizes.size(), 0);  // Logical index, row-major.
  for (int64_t i = 0; i < source.numel(); ++i) {
    int64_t offset = 0;
    for (size_t d = 0; d < index.size(); ++d) offset += index[d] * dst.strides()[d];
    std::memcpy(to + offset * element, from + i * element, element);
    for (size_t d = index.size(); d-- > 0;) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

// Input `index` from its --input file, or generated when none was given.
Result<PreparedInput> prepare_input(const RunOptions& options, const std::string& method,
                                    const MethodMeta& meta, Method& loaded, size_t index) {
  PreparedInput input;
  TL_ASSIGN_OR_RETURN(Tag tag, meta.input_tag(index));
  const bool from_file = !options.inputs.empty();
  const std::string file = from_file ? options.inputs[index] : std::string();

  if (tag != Tag::kTensor) {
    // Scalars and other non-tensor inputs keep the value the program holds.
    TL_CHECK_OR_RETURN(!from_file || file == kKeepProgramValue, Error::kInvalidType,
                       "%s: input %zu of method '%s' in %s is %s, not a tensor; pass '--input -' "
                       "to keep the program's value",
                       file.c_str(), index, method.c_str(), options.model.c_str(),
                       to_string(tag));
    input.value = loaded.input_value(index);
    input.source = describe_scalar(input.value) + " (the program's value)";
    return input;
  }

  TL_ASSIGN_OR_RETURN(TensorInfo info, meta.input_tensor_info(index));
  const std::vector<DimOrderType> dim_order(info.dim_order.begin(), info.dim_order.end());
  std::string origin;
  if (from_file) {
    TL_CHECK_OR_RETURN(file != kKeepProgramValue, Error::kInvalidArgument,
                       "input %zu of method '%s' in %s is a tensor; '--input -' is only for "
                       "scalar inputs",
                       index, method.c_str(), options.model.c_str());
    Result<OwnedTensor> tensor = read_npy(file);
    if (!tensor.ok()) return blame(file, tensor.status());
    TL_RETURN_IF_ERROR(check_tensor_input(file, options.model, index, method, info, tensor.get()));
    Result<OwnedTensor> laid_out = with_dim_order(tensor.get(), dim_order, info.dynamism);
    if (!laid_out.ok()) return blame(file, laid_out.status());
    input.storage.push_back(std::move(laid_out.get()));
    input.file = file;
    origin = "from " + file;
  } else {
    std::vector<SizesType> sizes(info.sizes.begin(), info.sizes.end());
    TL_ASSIGN_OR_RETURN(OwnedTensor tensor,
                        OwnedTensor::make_with_dim_order(info.dtype, std::move(sizes), dim_order,
                                                         info.dynamism));
    Status filled = Error::kOk;
    switch (options.fill) {
      case Fill::kZeros:
        origin = "zeros";
        break;
      case Fill::kOnes:
        filled = fill_ones(tensor.tensor());
        origin = "ones";
        break;
      case Fill::kRandom:
        // Each input gets its own stream, so two same-shaped inputs differ.
        filled = fill_random(tensor.tensor(), options.seed + index);
        origin = "random (seed " + std::to_string(options.seed + index) + ")";
        break;
    }
    if (!filled.ok()) {
      return filled.with_context("input %zu of method '%s' in %s", index, method.c_str(),
                                 options.model.c_str());
    }
    input.storage.push_back(std::move(tensor));
  }
  const OwnedTensor& tensor = input.storage[0];
  input.value = tensor.evalue();
  input.source = std::string(to_string(tensor.scalar_type())) + " " +
                 describe_sizes(tensor.sizes()) + "  " + origin;
  return input;
}

// A 0-d tensor holding a scalar output, so it can be saved as .npy too.
Result<OwnedTensor> scalar_as_tensor(const EValue& value) {
  if (value.is_int()) return OwnedTensor::from_values<int64_t>({}, {value.to_int()});
  if (value.is_double()) return OwnedTensor::from_values<double>({}, {value.to_double()});
  const bool b = value.to_bool();
  return OwnedTensor::from_data(ScalarType::kBool, {}, &b, sizeof(b));
}

// Prints every output and, with --output-dir, writes DIR/output<i>.npy,
// appending each path to `written`.
Status report_outputs(const RunOptions& options, const Method& method,
                      std::vector<std::string>* written) {
  if (!options.output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.output_dir, ec);
    if (ec) {
      return Status::error(Error::kAccessFailed, "%s: cannot create the output directory: %s",
                           options.output_dir.c_str(), ec.message().c_str());
    }
  }
  for (size_t i = 0; i < method.outputs_size(); ++i) {
    TL_ASSIGN_OR_RETURN(const EValue* value, method.output(i));
    const std::string label = "output " + std::to_string(i);
    Tensor to_save;
    std::vector<OwnedTensor> scalar_storage;  // Holds a scalar output as a 0-d tensor.
    if (value->is_tensor()) {
      const Tensor t = value->to_tensor();
      row(label, std::string(to_string(t.scalar_type())) + " " + describe_sizes(t.sizes()) +
                     " = " + format_values(t, kLeadingValues));
      to_save = t;
    } else if (value->is_scalar()) {
      row(label, describe_scalar(*value));
      TL_ASSIGN_OR_RETURN(OwnedTensor scalar, scalar_as_tensor(*value));
      scalar_storage.push_back(std::move(scalar));
      to_save = scalar_storage.back().tensor();
    } else {
      row(label, std::string(to_string(value->tag())) + " (not saved: not a tensor or scalar)");
      continue;
    }
    if (options.output_dir.empty()) continue;
    const std::string path =
        (std::filesystem::path(options.output_dir) / ("output" + std::to_string(i) + ".npy"))
            .string();
    Status saved = write_npy(path, to_save);
    if (!saved.ok()) return blame(path, saved);
    written->push_back(path);
  }
  return Error::kOk;
}

}  // namespace

const char* run_usage() {
  return "usage: torchlight run MODEL.pte [options]\n"
         "\n"
         "Runs one method of a program and prints each output's dtype, shape and\n"
         "leading values, the load time (program + method) and the per-run latency.\n"
         "\n"
         "options:\n"
         "  --method NAME        method to run (default: forward, else the first)\n"
         "  --input FILE.npy     one per method input, in order; give all or none.\n"
         "                       A scalar (Int/Double/Bool) input takes '-', which\n"
         "                       keeps the value stored in the program\n"
         "  --fill MODE          without --input: zeros, ones or random (default)\n"
         "  --seed S             seed of --fill random (default 0; input i uses S+i)\n"
         "  --output-dir DIR     write outputs as DIR/output0.npy, output1.npy, ...\n"
         "                       (DIR is created if missing)\n"
         "  --repeat N           run N times and print median/min/max latency\n"
         "                       (default 1; inputs are set before every run,\n"
         "                       only execution is timed)\n"
         "  --load-mode MODE     file, mmap (default) or mlock\n"
         "  --etdump FILE.etdp   record an ETDump trace (upstream's format): the load\n"
         "                       as block 'Default', each run as a block 'Execute'\n"
         "  --debug-buffer BYTES with --etdump: capture every intermediate output and\n"
         "                       the program outputs into a debug buffer of this size,\n"
         "                       written to FILE.etdp.debug (or --debug-buffer-path)\n"
         "  --debug-buffer-path P where to write the debug buffer\n"
         "  --etdump-events N    with --etdump: room for N events (default: sized from\n"
         "                       the program and --repeat)\n"
         "  -h, --help           show this help\n";
}

int run_command(const std::vector<std::string>& args) {
  std::vector<OptionSpec> specs = run_option_specs();
  specs.push_back({"output-dir"});
  specs.push_back({"etdump"});
  specs.push_back({"debug-buffer"});
  specs.push_back({"debug-buffer-path"});
  specs.push_back({"etdump-events"});
  ArgParser parser("run", specs);
  Status parsed = parser.parse(args);
  if (!parsed.ok()) return report_error("", parsed);
  if (parser.help_requested()) {
    std::fputs(run_usage(), stdout);
    return 0;
  }
  Result<RunOptions> parsed_options = parse_run_options(parser, "run");
  if (!parsed_options.ok()) return report_error("", parsed_options.status());
  RunOptions& options = parsed_options.get();
  options.output_dir = parser.value("output-dir", "");
  if (parser.has("output-dir") && options.output_dir.empty()) {
    return report_error("", "--output-dir must not be empty");
  }
  if (!parser.has("etdump")) {
    for (const char* name : {"debug-buffer", "debug-buffer-path", "etdump-events"}) {
      if (parser.has(name)) return report_error("", std::string("--") + name + " needs --etdump FILE");
    }
    RunHooks hooks;
    return run_program(options, hooks);
  }
  Result<EtdumpCaptureOptions> capture_options = parse_etdump_options(parser);
  if (!capture_options.ok()) return report_error("", capture_options.status());
  EtdumpCapture capture(capture_options.get());
  RunHooks hooks;
  hooks.tracer = &capture.tracer();
  hooks.on_program_loaded = [&](const MethodMeta& meta) {
    return capture.size_for(meta, options.repeat);
  };
  hooks.on_done = [&](Method&, const RunTimes&) { return capture.write(); };
  return run_program(options, hooks);
}

int run_program(const RunOptions& options, RunHooks& hooks) {
  // Load: program, then method, each on the monotonic clock.
  const std::string& model = options.model;
  Module module(model, options.load_mode, hooks.tracer);
  Stopwatch watch;
  Status status = module.load();
  const double program_ms = watch.elapsed_ms();
  if (!status.ok()) return report_error(model, status);
  Result<std::string> method_name = choose_method(module, options);
  if (!method_name.ok()) return report_error(model, method_name.status());
  const std::string& name = method_name.get();
  if (hooks.on_program_loaded) {
    Result<MethodMeta> program_meta = module.method_meta(name);
    if (!program_meta.ok()) return report_error(model, program_meta.status());
    status = hooks.on_program_loaded(program_meta.get());
    if (!status.ok()) return report_error("", status);
  }
  watch.restart();
  Result<Method*> method = module.method(name);
  const double method_ms = watch.elapsed_ms();
  if (!method.ok()) return report_error(model, method.status());
  Method& loaded = *method.get();
  const MethodMeta meta = loaded.method_meta();

  if (!options.inputs.empty() && options.inputs.size() != meta.num_inputs()) {
    const size_t given = options.inputs.size();
    return report_error(model, "method '" + name + "' takes " +
                                   std::to_string(meta.num_inputs()) +
                                   (meta.num_inputs() == 1 ? " input, but " : " inputs, but ") +
                                   std::to_string(given) + (given == 1 ? " was" : " were") +
                                   " given with --input (give one per input, in order, or none)");
  }
  std::vector<PreparedInput> inputs;
  for (size_t i = 0; i < meta.num_inputs(); ++i) {
    Result<PreparedInput> input = prepare_input(options, name, meta, loaded, i);
    if (!input.ok()) return report_error("", input.status());
    inputs.push_back(std::move(input.get()));
  }

  row("model", model + "  (method " + name + ", load mode " + options.load_mode_name + ")");
  if (hooks.print_outputs) {
    row("load", ms(program_ms + method_ms) + "  (program " + ms(program_ms) + ", method " +
                    ms(method_ms) + ")");
  }
  for (size_t i = 0; i < inputs.size(); ++i) row("input " + std::to_string(i), inputs[i].source);

  // A planned output may share an input's memory, so inputs are set again
  // before every run; only execute() is timed.
  std::vector<double> samples;
  samples.reserve(static_cast<size_t>(options.repeat));
  for (int64_t run = 0; run < options.repeat; ++run) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      status = loaded.set_input(i, inputs[i].value);
      if (!status.ok()) {
        return report_error(inputs[i].file.empty() ? model : inputs[i].file, status);
      }
    }
    watch.restart();
    status = loaded.execute();
    samples.push_back(watch.elapsed_ms());
    if (!status.ok()) return report_error(model, status);
  }

  if (hooks.on_done) {
    status = hooks.on_done(loaded, RunTimes{program_ms, method_ms, samples});
    if (!status.ok()) return report_error("", status);
  }
  if (!hooks.print_outputs) {
    std::fflush(stdout);
    return 0;
  }
  std::vector<std::string> written;
  status = report_outputs(options, loaded, &written);
  if (!status.ok()) return report_error("", status);
  const LatencyStats stats = summarize_latency(std::move(samples));
  row("latency", "median " + ms(stats.median_ms) + ", min " + ms(stats.min_ms) + ", max " +
                     ms(stats.max_ms) + "  (" + std::to_string(stats.runs) +
                     (stats.runs == 1 ? " run)" : " runs)"));
  for (const std::string& path : written) row("wrote", path);
  std::fflush(stdout);
  return 0;
}

}  // namespace cli
}  // namespace torchlight
