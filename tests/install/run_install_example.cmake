# ctest install_example: install the build tree into a private prefix, build examples/README_example
# against it as a separate project (find_package(spmv CONFIG REQUIRED)), run it and check its output.
# Arguments: -DSPMV_SOURCE_DIR=... -DSPMV_BINARY_DIR=... -DWORK_DIR=...
cmake_minimum_required(VERSION 3.24)

foreach(var SPMV_SOURCE_DIR SPMV_BINARY_DIR WORK_DIR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "install_example: pass -D${var}=...")
  endif()
endforeach()

set(prefix ${WORK_DIR}/prefix)
set(example_build ${WORK_DIR}/build)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

# Runs a command; on failure stops with the step's name and everything it printed.
function(run_step name)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    string(REPLACE ";" " " command "${ARGN}")
    message(FATAL_ERROR "install_example: ${name} failed (exit ${result})\n  command: ${command}\n"
                        "--- stdout ---\n${out}\n--- stderr ---\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

# The example is configured with the same tools as the main build: read them from its cache.
set(cache_entries CMAKE_GENERATOR CMAKE_MAKE_PROGRAM CMAKE_CXX_COMPILER CMAKE_BUILD_TYPE CMAKE_CUDA_COMPILER
                  CUDAToolkit_ROOT)
foreach(entry ${cache_entries})
  set(cached_${entry} "")
endforeach()
file(STRINGS ${SPMV_BINARY_DIR}/CMakeCache.txt cache_lines)
foreach(line IN LISTS cache_lines)
  foreach(entry ${cache_entries})
    if(line MATCHES "^${entry}:[A-Z]+=(.*)$")
      set(cached_${entry} "${CMAKE_MATCH_1}")
    endif()
  endforeach()
endforeach()

# 1. Install.
run_step("cmake --install" ${CMAKE_COMMAND} --install ${SPMV_BINARY_DIR} --prefix ${prefix})
foreach(installed include/spmv/operator.hpp include/spmv/matrix_market.hpp)
  if(NOT EXISTS ${prefix}/${installed})
    message(FATAL_ERROR "install_example: ${prefix}/${installed} was not installed")
  endif()
endforeach()
file(GLOB_RECURSE config_files ${prefix}/*/spmvConfig.cmake)
if(NOT config_files)
  message(FATAL_ERROR "install_example: no spmvConfig.cmake under ${prefix}: the package is not installed")
endif()

# 2. Configure and build the example against the installed package only.
set(configure_args -S ${SPMV_SOURCE_DIR}/examples/README_example -B ${example_build} -DCMAKE_PREFIX_PATH=${prefix})
if(cached_CMAKE_GENERATOR)
  list(APPEND configure_args -G ${cached_CMAKE_GENERATOR})
endif()
foreach(entry CMAKE_MAKE_PROGRAM CMAKE_CXX_COMPILER CMAKE_BUILD_TYPE CMAKE_CUDA_COMPILER CUDAToolkit_ROOT)
  if(cached_${entry} AND NOT cached_${entry} MATCHES "-NOTFOUND$")
    list(APPEND configure_args -D${entry}=${cached_${entry}})
  endif()
endforeach()
# A CUDA-enabled package needs find_dependency(CUDAToolkit): point it at the toolkit of the compiler used.
if(cached_CMAKE_CUDA_COMPILER AND NOT cached_CUDAToolkit_ROOT)
  get_filename_component(cuda_bin ${cached_CMAKE_CUDA_COMPILER} DIRECTORY)
  get_filename_component(cuda_root ${cuda_bin} DIRECTORY)
  list(APPEND configure_args -DCUDAToolkit_ROOT=${cuda_root})
endif()
run_step("configuring examples/README_example against the installed package" ${CMAKE_COMMAND} ${configure_args})
run_step("building examples/README_example" ${CMAKE_COMMAND} --build ${example_build})

find_program(example readme_example PATHS ${example_build} ${example_build}/Release ${example_build}/Debug
             NO_DEFAULT_PATH)
if(NOT example)
  message(FATAL_ERROR "install_example: the built readme_example was not found under ${example_build}")
endif()

# Fails unless every regular expression in the list matches the output.
function(expect_output what output)
  foreach(pattern ${ARGN})
    if(NOT output MATCHES "${pattern}")
      message(FATAL_ERROR "install_example: ${what}: expected output matching '${pattern}', got:\n${output}")
    endif()
  endforeach()
endfunction()

# 3. Run it on a hand-written matrix [1 2 0; 0 3 0; 4 0 5]: A * ones = [3, 3, 9], norm sqrt(99).
file(WRITE ${WORK_DIR}/hand.mtx
  "%%MatrixMarket matrix coordinate real general\n% A = [1 2 0; 0 3 0; 4 0 5]\n3 3 5\n"
  "1 1 1\n1 2 2\n2 2 3\n3 1 4\n3 3 5\n")
run_step("running readme_example on hand.mtx" ${example} ${WORK_DIR}/hand.mtx)
expect_output("readme_example hand.mtx" "${step_output}"
  "3 x 3, 5 nonzeros" "y\\[0\\] = 3\n" "y\\[1\\] = 3\n" "y\\[2\\] = 9\n" "\\|\\|y\\|\\|_2 = 9\\.94987437107\n")

# 4. The installed command-line tool works too: a generated 4 x 4 grid Laplacian; A * ones is 2 at the
#    4 corners, 1 at the 8 edge points and 0 inside, so the norm is sqrt(4*4 + 8) = sqrt(24).
set(installed_cli ${prefix}/bin/spmv)
if(EXISTS ${installed_cli})
  run_step("installed spmv gen" ${installed_cli} gen poisson2d n=4 -o ${WORK_DIR}/poisson.mtx.gz)
  run_step("running readme_example on poisson.mtx.gz" ${example} ${WORK_DIR}/poisson.mtx.gz)
  expect_output("readme_example poisson.mtx.gz" "${step_output}"
    "16 x 16, 64 nonzeros" "y\\[0\\] = 2\n" "y\\[1\\] = 1\n" "\\|\\|y\\|\\|_2 = 4\\.89897948557\n")
else()
  message(STATUS "install_example: ${installed_cli} not installed (SPMV_BUILD_CLI=OFF?); skipped its check")
endif()

message(STATUS "install_example: install, find_package(spmv), build and run all passed")
