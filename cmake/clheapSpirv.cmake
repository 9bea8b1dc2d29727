# clheap_add_spirv(<name> ALLOCATOR <allocator> SOURCES <file.cl>... [OUTPUT <file.spv>]
#                  [OPTIONS <clang option>...] [ATOMICS32])
#
# Compiles the allocator (clheap.cl) and a program's kernel sources, ahead of time, to a SPIR-V
# module for clheap_heap_build_program_il: Debian's clang (OpenCL C 2.0, target spir64),
# then llvm-spirv. A target <name> builds <name>.spv in the binary folder (or OUTPUT);
# CLHEAP_SPIRV_VALIDATOR is spirv-val, for checks. <allocator> is a name of the vocabulary
# (TierAlloc, ...): the module is for heaps of that allocator only (it names it in a
# kernel, clheap_il_allocator_<number>, which clheap_heap_build_program_il looks for).
# ATOMICS32: the build for devices without 64-bit atomics (-DCLHEAP_ATOMICS64=0: only the
# allocators whose atomic words are 32-bit), for heaps on such devices only (the kernel is
# clheap_il_allocator_<number>_atomics32).
#
# Why OpenCL C 2.0: in SPIR-V, OpenCL C 1.2's read_/write_mem_fence become work-group-scope
# barriers (OpMemoryBarrier scope 2), which order nothing between work-groups; from 2.0 on
# clheap's fences are atomic_work_item_fence at device scope (cl/clheap_port.h). Why -O0:
# llvm-spirv 14 cannot translate the `freeze` that clang's optimiser emits, and the driver
# that takes the module optimises it anyway.
#
# Found: CLHEAP_SPIRV_CLANG, CLHEAP_SPIRV_TRANSLATOR, CLHEAP_SPIRV_VALIDATOR, and
# CLHEAP_SPIRV_FOUND when the first two are. clheap_CL_DIR (the installed package's) or the
# source tree's cl/ holds clheap.cl.

find_program(CLHEAP_SPIRV_CLANG NAMES clang-14 clang)
find_program(CLHEAP_SPIRV_TRANSLATOR NAMES llvm-spirv-14 llvm-spirv)
find_program(CLHEAP_SPIRV_VALIDATOR NAMES spirv-val)
set(CLHEAP_SPIRV_FOUND FALSE)
if(CLHEAP_SPIRV_CLANG AND CLHEAP_SPIRV_TRANSLATOR)
  set(CLHEAP_SPIRV_FOUND TRUE)
endif()
set(_clheap_spirv_dir ${CMAKE_CURRENT_LIST_DIR})

# The number of allocator `name`, read from the vocabulary's kernel-side header.
function(clheap_spirv_allocator_number name cl_dir out)
  file(STRINGS ${cl_dir}/clheap_vocabulary.h kinds REGEX "^#define CLHEAP_KIND_[A-Z_]+ [0-9]+ /\\* ${name} \\*/")
  if(NOT kinds MATCHES "^#define CLHEAP_KIND_[A-Z_]+ ([0-9]+) ")
    message(FATAL_ERROR "clheap_add_spirv: no allocator named ${name} in ${cl_dir}/clheap_vocabulary.h")
  endif()
  set(${out} ${CMAKE_MATCH_1} PARENT_SCOPE)
endfunction()

function(clheap_add_spirv name)
  cmake_parse_arguments(ARG "ATOMICS32" "ALLOCATOR;OUTPUT" "SOURCES;OPTIONS" ${ARGN})
  if(NOT CLHEAP_SPIRV_FOUND)
    message(FATAL_ERROR "clheap_add_spirv: needs clang and llvm-spirv (Debian: clang llvm-spirv-14)")
  endif()
  if(DEFINED clheap_CL_DIR)
    set(cl_dir ${clheap_CL_DIR})
  else()
    set(cl_dir ${_clheap_spirv_dir}/../cl)
  endif()
  get_filename_component(cl_dir ${cl_dir} ABSOLUTE)
  clheap_spirv_allocator_number(${ARG_ALLOCATOR} ${cl_dir} number)
  if(NOT ARG_OUTPUT)
    set(ARG_OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/${name}.spv)
  endif()
  set(all ${CMAKE_CURRENT_BINARY_DIR}/${name}.all.cl)
  set(lines "#include \"clheap.cl\"\n")
  set(depends)
  foreach(source ${ARG_SOURCES})
    get_filename_component(source ${source} ABSOLUTE)
    string(APPEND lines "#include \"${source}\"\n")
    list(APPEND depends ${source})
  endforeach()
  file(GENERATE OUTPUT ${all} CONTENT "${lines}")
  file(GLOB cl_files ${cl_dir}/*.h ${cl_dir}/*.cl)
  set(atomics -Xclang -cl-ext=+cl_khr_int64_base_atomics,+cl_khr_int64_extended_atomics)
  if(ARG_ATOMICS32)
    set(atomics -Xclang -cl-ext=-cl_khr_int64_base_atomics,-cl_khr_int64_extended_atomics -DCLHEAP_ATOMICS64=0)
  endif()
  add_custom_command(
    OUTPUT ${ARG_OUTPUT}
    COMMAND ${CLHEAP_SPIRV_CLANG} -cl-std=CL2.0 -target spir64-unknown-unknown -O0 -emit-llvm -c
            -Xclang -finclude-default-header
            ${atomics} -DCLHEAP_ALLOCATOR=${number} -DCLHEAP_IL=1 -I${cl_dir} ${ARG_OPTIONS} ${all} -o ${ARG_OUTPUT}.bc
    COMMAND ${CLHEAP_SPIRV_TRANSLATOR} ${ARG_OUTPUT}.bc -o ${ARG_OUTPUT}
    DEPENDS ${depends} ${cl_files} ${all}
    COMMENT "SPIR-V: ${name} (${ARG_ALLOCATOR})"
    VERBATIM)
  add_custom_target(${name} ALL DEPENDS ${ARG_OUTPUT})
endfunction()
