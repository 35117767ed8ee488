# torchlight_flatc_library(NAME FBS SCHEMA OUTPUT_DIR DIR [OBJECT_API]):
# compiles SCHEMA (a .fbs) with flatc at build time into
# <binary dir>/generated/DIR/<name>_generated.h, and makes NAME an INTERFACE
# library whose users can include "DIR/<name>_generated.h". Only .cpp files
# and tests include generated headers; public headers never do, so link it
# PRIVATE. OBJECT_API adds flatc's object API (the T-suffixed structs).
find_program(FLATC flatc REQUIRED)

function(torchlight_flatc_library name)
  cmake_parse_arguments(arg "OBJECT_API" "FBS;OUTPUT_DIR" "" ${ARGN})
  get_filename_component(schema ${arg_FBS} ABSOLUTE)
  get_filename_component(stem ${schema} NAME_WE)
  set(root ${CMAKE_CURRENT_BINARY_DIR}/generated)
  set(header ${root}/${arg_OUTPUT_DIR}/${stem}_generated.h)
  set(flags --cpp --scoped-enums)
  if(arg_OBJECT_API)
    list(APPEND flags --gen-object-api)
  endif()
  add_custom_command(
    OUTPUT ${header}
    COMMAND ${FLATC} ${flags} -o ${root}/${arg_OUTPUT_DIR} ${schema}
    DEPENDS ${schema}
    COMMENT "flatc ${stem}.fbs")
  add_custom_target(${name}_gen DEPENDS ${header})
  add_library(${name} INTERFACE)
  add_dependencies(${name} ${name}_gen)
  target_include_directories(${name} INTERFACE ${root})
endfunction()
