# Run by the test torchlight_portable_selective_unknown_op in script mode
# (cmake -P): asking for an operator the portable library lacks must stop
# with an error that names it, before any target is made.
include(${TORCHLIGHT_PORTABLE_SOURCE_DIR}/selective_build.cmake)
torchlight_selective_kernel_library(should_not_exist OPS aten::add.out aten::nonexistent.out)
message(FATAL_ERROR "torchlight_selective_kernel_library accepted an unknown operator")
