// Module's default form: every kernel library and the default backends. In
// its own target (torchlight_module_defaults) so that an application built
// on a selective kernel library links torchlight_module alone.
#include "extension/module/default_backends.h"
#include "extension/module/module.h"
#include "kernels/all_kernels.h"

namespace torchlight {

Module::Module(std::string path, LoadMode mode, EventTracer* event_tracer)
    : Module(std::move(path), mode, all_kernels(), default_backends(), event_tracer) {}

}  // namespace torchlight
