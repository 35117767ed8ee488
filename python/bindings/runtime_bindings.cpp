// _torchlight_runtime: Python bindings of the runtime (Module, MethodMeta,
// the kernel and backend registries), wrapped by python/torchlight/runtime.py.
//
// Tensors cross the boundary as raw bytes plus a ScalarType code and sizes,
// so this file needs neither numpy nor libtorch headers: runtime.py converts
// torch tensors and numpy arrays. This is the only target built with
// exceptions and RTTI (pybind11 needs them); the runtime libraries it links
// are built without.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/test_backend/test_backend.h"
#include "backends/xnnpack/xnnpack_backend.h"
#include "devtools/etdump/etdump_gen.h"
#include "extension/module/module.h"
#include "extension/tensor/tensor_ptr.h"
#include "extension/threadpool/threadpool.h"
#include "kernels/all_kernels.h"
#include "runtime/backend/backend_registry.h"
#include "runtime/executor/method.h"

namespace py = pybind11;

namespace torchlight {
namespace {

// A failed Status, raised in Python as _torchlight_runtime.Error (a
// RuntimeError) whose message starts with the error code's name.
class StatusError : public std::runtime_error {
 public:
  explicit StatusError(const Status& status)
      : std::runtime_error(std::string(to_string(status.code())) + ": " + status.message()) {}
};

void check(const Status& status) {
  if (!status.ok()) throw StatusError(status);
}

template <typename T>
T take(Result<T>&& result) {
  if (!result.ok()) throw StatusError(result.status());
  return std::move(result.get());
}

// Every kernel library, for every Module the bindings load.
const KernelRegistry& kernels() { return *take(all_kernels()); }

// Backends the bindings make available to every Module they load.
const BackendRegistry& backends() {
  static BackendRegistry* registry = [] {
    auto* r = new BackendRegistry();
    check(register_test_backend(*r));
    check(register_xnnpack_backend(*r));
    return r;
  }();
  return *registry;
}

py::dict tensor_info_dict(const TensorInfo& info) {
  py::dict d;
  d["scalar_type"] = static_cast<int>(info.dtype);
  d["sizes"] = std::vector<int32_t>(info.sizes.begin(), info.sizes.end());
  d["dim_order"] = std::vector<int>(info.dim_order.begin(), info.dim_order.end());
  d["dynamism"] = static_cast<int>(info.dynamism);
  d["memory_planned"] = info.memory_planned;
  d["nbytes"] = info.nbytes;
  return d;
}

py::dict io_dict(Result<Tag> tag, Result<TensorInfo> info) {
  py::dict d;
  const Tag t = take(std::move(tag));
  d["tag"] = to_string(t);
  if (t == Tag::kTensor) d["tensor"] = tensor_info_dict(take(std::move(info)));
  return d;
}

// An ETDump tracer with its storage, fixed when the Module is made.
struct Trace {
  Trace(size_t events, size_t debug_bytes)
      : records(events), side_data(events * 96), debug(debug_bytes) {
    gen.set_storage({records.data(), records.size()}, {side_data.data(), side_data.size()});
    if (debug_bytes > 0) gen.set_debug_buffer({debug.data(), debug.size()});
  }
  std::vector<etdump::EtdumpRecord> records;
  std::vector<uint8_t> side_data;
  std::vector<uint8_t> debug;
  etdump::EtdumpGen gen;
};

void write_bytes(const std::string& path, const uint8_t* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) throw std::runtime_error("kAccessFailed: " + path + ": cannot write the file");
}

class PyModule {
 public:
  /// `etdump_events` > 0 attaches an ETDump tracer with room for that many
  /// events and `debug_buffer_size` bytes of intermediate outputs.
  PyModule(const std::string& path, bool mmap, size_t etdump_events, size_t debug_buffer_size)
      : trace_(etdump_events > 0 ? std::make_unique<Trace>(etdump_events, debug_buffer_size)
                                 : nullptr),
        module_(path, mmap ? Module::LoadMode::kMmap : Module::LoadMode::kFile, kernels(),
                &backends(), trace_ != nullptr ? &trace_->gen : nullptr) {
    check(module_.load());
  }

  /// Writes the trace so far to `path` and, with a debug buffer, its used
  /// part to `debug_path`. Returns (events recorded, events dropped, debug
  /// values dropped, debug bytes needed).
  py::tuple write_etdump(const std::string& path, const std::string& debug_path) {
    if (trace_ == nullptr) {
      throw std::runtime_error("kInvalidState: this Module was made without an etdump path");
    }
    etdump::EtdumpGen& gen = trace_->gen;
    std::vector<uint8_t> out(gen.serialized_size_bound());
    Span<const uint8_t> bytes = take(gen.serialize({out.data(), out.size()}));
    write_bytes(path, bytes.data(), bytes.size());
    if (!trace_->debug.empty()) {
      write_bytes(debug_path, gen.debug_data().data(), gen.debug_data().size());
    }
    return py::make_tuple(gen.records_used(), gen.events_dropped(), gen.debug_values_dropped(),
                          gen.debug_bytes_needed());
  }

  std::vector<std::string> method_names() { return take(module_.ordered_method_names()); }

  py::dict method_meta(const std::string& name) {
    MethodMeta meta = take(module_.method_meta(name));
    py::dict d;
    d["name"] = std::string(meta.name());
    py::list inputs;
    for (size_t i = 0; i < meta.num_inputs(); ++i) {
      inputs.append(io_dict(meta.input_tag(i), meta.input_tensor_info(i)));
    }
    py::list outputs;
    for (size_t i = 0; i < meta.num_outputs(); ++i) {
      outputs.append(io_dict(meta.output_tag(i), meta.output_tensor_info(i)));
    }
    d["inputs"] = inputs;
    d["outputs"] = outputs;
    std::vector<int64_t> buffers;
    for (size_t i = 0; i < meta.num_planned_buffers(); ++i) {
      buffers.push_back(take(meta.planned_buffer_size(i)));
    }
    d["planned_buffer_sizes"] = buffers;
    std::vector<std::string> operators;
    for (size_t i = 0; i < meta.num_operators(); ++i) {
      char text[256];
      operators.emplace_back(take(meta.operator_name(i, text, sizeof(text))));
    }
    d["operators"] = operators;
    std::vector<std::string> backend_names;
    for (size_t i = 0; i < meta.num_backends(); ++i) {
      backend_names.emplace_back(take(meta.backend_name(i)));
    }
    d["backends"] = backend_names;
    d["num_values"] = meta.num_values();
    d["num_instructions"] = meta.num_instructions();
    return d;
  }

  void load_method(const std::string& name) { check(module_.load_method(name)); }

  /// Runs `name`. Each input is a (buffer, scalar_type, sizes) tuple for a
  /// tensor, or a bool / int / float. Tensor outputs come back as
  /// (bytearray, scalar_type, sizes); scalars as Python values.
  py::list execute(const std::string& name, const py::list& inputs) {
    Method* method = take(module_.method(name));
    if (inputs.size() != method->inputs_size()) {
      throw StatusError(Status::error(Error::kInvalidArgument,
                                      "method '%s' takes %zu inputs, %zu were given", name.c_str(),
                                      method->inputs_size(), inputs.size()));
    }
    std::vector<TensorPtr> tensors;  // Views of the input buffers, kept until return.
    std::vector<py::buffer_info> buffers;  // Keeps input memory pinned until return.
    for (size_t i = 0; i < inputs.size(); ++i) {
      py::handle item = inputs[i];
      if (py::isinstance<py::tuple>(item)) {
        auto tuple = item.cast<py::tuple>();
        buffers.push_back(tuple[0].cast<py::buffer>().request());
        const auto type = static_cast<ScalarType>(tuple[1].cast<int>());
        if (!is_valid(type)) {
          throw StatusError(Status::error(Error::kInvalidType, "input %zu has invalid dtype %d", i,
                                          static_cast<int>(type)));
        }
        const size_t buffer_bytes = static_cast<size_t>(buffers.back().size * buffers.back().itemsize);
        TensorPtr t = from_blob(buffers.back().ptr, tuple[2].cast<std::vector<SizesType>>(), type);
        if (t == nullptr || t->nbytes() != buffer_bytes) {
          throw StatusError(Status::error(Error::kInvalidArgument,
                                          "input %zu: sizes do not match its %zu-byte buffer", i,
                                          buffer_bytes));
        }
        check(method->set_input(i, EValue(*t)));
        tensors.push_back(std::move(t));
      } else if (py::isinstance<py::bool_>(item)) {
        check(method->set_input(i, EValue(item.cast<bool>())));
      } else if (py::isinstance<py::int_>(item)) {
        check(method->set_input(i, EValue(item.cast<int64_t>())));
      } else if (py::isinstance<py::float_>(item)) {
        check(method->set_input(i, EValue(item.cast<double>())));
      } else {
        throw StatusError(Status::error(Error::kInvalidType,
                                        "input %zu must be a tensor, bool, int or float", i));
      }
    }
    // Unplanned outputs write into memory we own, sized for the upper bound.
    // It outlives the call: the method keeps pointing at it, so the next run
    // finds it bound (a per-call buffer would leave a dangling pointer that
    // looks bound).
    MethodMeta meta = method->method_meta();
    std::vector<std::vector<uint8_t>>& output_storage = output_storage_[name];
    output_storage.resize(method->outputs_size());
    for (size_t i = 0; i < method->outputs_size(); ++i) {
      if (take(meta.output_tag(i)) != Tag::kTensor) continue;
      TensorInfo info = take(meta.output_tensor_info(i));
      if (info.memory_planned || info.nbytes == 0) continue;
      const EValue* out = take(method->output(i));
      if (out->to_tensor().const_data_ptr() != nullptr) continue;  // Constant or input.
      output_storage[i].resize(info.nbytes);
      check(method->set_output_data_ptr(i, output_storage[i].data(), info.nbytes));
    }
    check(method->execute());
    py::list outputs;
    for (size_t i = 0; i < method->outputs_size(); ++i) {
      const EValue* value = take(method->output(i));
      outputs.append(to_python(*value));
    }
    return outputs;
  }

  size_t planned_bytes(const std::string& name) const { return module_.planned_bytes(name); }

 private:
  static py::object to_python(const EValue& value) {
    switch (value.tag()) {
      case Tag::kNone: return py::none();
      case Tag::kInt: return py::int_(value.to_int());
      case Tag::kDouble: return py::float_(value.to_double());
      case Tag::kBool: return py::bool_(value.to_bool());
      case Tag::kString: return py::str(std::string(value.to_string()));
      case Tag::kTensor: {
        const Tensor t = value.to_tensor();
        const char* data = static_cast<const char*>(t.const_data_ptr());
        py::bytearray bytes(data == nullptr ? "" : data, data == nullptr ? 0 : t.nbytes());
        std::vector<int32_t> sizes(t.sizes().begin(), t.sizes().end());
        return py::make_tuple(bytes, static_cast<int>(t.scalar_type()), sizes);
      }
      case Tag::kIntList: {
        auto items = value.to_int_list();
        return py::cast(std::vector<int64_t>(items.begin(), items.end()));
      }
      case Tag::kDoubleList: {
        auto items = value.to_double_list();
        return py::cast(std::vector<double>(items.begin(), items.end()));
      }
      case Tag::kBoolList: {
        auto items = value.to_bool_list();
        return py::cast(std::vector<bool>(items.begin(), items.end()));
      }
      case Tag::kTensorList:
      case Tag::kOptionalTensorList: {
        py::list list;
        for (const Tensor& t : value.to_tensor_list()) {
          list.append(t.defined() ? to_python(EValue(t)) : py::none());
        }
        return list;
      }
    }
    return py::none();
  }

  std::unique_ptr<Trace> trace_;  // Before module_, which borrows its tracer.
  Module module_;
  std::map<std::string, std::vector<std::vector<uint8_t>>> output_storage_;  // See execute().
};

std::vector<std::string> registered_kernels() {
  const KernelRegistry* registry = take(all_kernels());
  std::vector<std::string> names;
  for (const Kernel& kernel : registry->kernels()) names.emplace_back(kernel.name);
  return names;
}

std::vector<std::string> registered_backends() {
  std::vector<std::string> names;
  for (size_t i = 0; i < backends().size(); ++i) names.emplace_back(backends().name(i));
  return names;
}

}  // namespace
}  // namespace torchlight

PYBIND11_MODULE(_torchlight_runtime, m) {
  using torchlight::PyModule;
  m.doc() = "Torchlight runtime bindings; use torchlight.runtime instead.";
  py::register_exception<torchlight::StatusError>(m, "Error", PyExc_RuntimeError);
  m.def("registered_kernels", &torchlight::registered_kernels,
        "Names of every kernel in this runtime build.");
  m.def("registered_backends", &torchlight::registered_backends,
        "Ids of the delegate backends programs may use.");
  // The shared worker pool (kernels and XNNPACK). Set it before loading any
  // program: delegates built earlier keep the pool they were built with.
  m.def("set_num_threads", &torchlight::threadpool::set_num_threads, py::arg("n"),
        "Resizes the shared worker pool (0: one thread per core); call before loading.");
  m.def("num_threads", &torchlight::threadpool::num_threads,
        "Threads in the shared worker pool.");
  py::class_<PyModule>(m, "Module")
      .def(py::init<const std::string&, bool, size_t, size_t>(), py::arg("path"),
           py::arg("mmap") = true, py::arg("etdump_events") = 0, py::arg("debug_buffer_size") = 0)
      .def("write_etdump", &PyModule::write_etdump, py::arg("path"), py::arg("debug_path"))
      .def("method_names", &PyModule::method_names)
      .def("method_meta", &PyModule::method_meta, py::arg("name"))
      .def("load_method", &PyModule::load_method, py::arg("name"))
      .def("execute", &PyModule::execute, py::arg("name"), py::arg("inputs"))
      .def("planned_bytes", &PyModule::planned_bytes, py::arg("name"));
}
