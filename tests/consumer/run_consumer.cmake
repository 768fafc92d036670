# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
# Installs resident to a scratch prefix, then configures, builds and runs the consumer
# project twice: once finding the installed package, once through add_subdirectory.
# Inputs: RESIDENT_SOURCE_DIR, WORK_DIR, GENERATOR, ENABLE_CUDA.

function(run_step description)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "consumer test: ${description} failed (exit ${status})")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
run_step("configuring resident" ${CMAKE_COMMAND} -S "${RESIDENT_SOURCE_DIR}"
  -B "${WORK_DIR}/resident-build" -G "${GENERATOR}" -DCMAKE_INSTALL_PREFIX=${prefix}
  -DRESIDENT_ENABLE_CUDA=${ENABLE_CUDA} -DRESIDENT_BUILD_TESTS=OFF
  -DRESIDENT_BUILD_EXAMPLES=OFF -DRESIDENT_BUILD_BENCHMARKS=OFF)
run_step("installing resident" ${CMAKE_COMMAND} --install "${WORK_DIR}/resident-build")

foreach(mode IN ITEMS find_package add_subdirectory)
  set(build "${WORK_DIR}/consumer-${mode}")
  run_step("configuring the consumer (${mode})" ${CMAKE_COMMAND}
    -S "${CMAKE_CURRENT_LIST_DIR}" -B "${build}" -G "${GENERATOR}"
    -DCMAKE_PREFIX_PATH=${prefix} -DCONSUMER_MODE=${mode}
    -DRESIDENT_SOURCE_DIR=${RESIDENT_SOURCE_DIR} -DRESIDENT_ENABLE_CUDA=${ENABLE_CUDA})
  run_step("building the consumer (${mode})" ${CMAKE_COMMAND} --build "${build}")
  run_step("running the g++ consumer (${mode})" "${build}/consumer")
  run_step("running the C++20 consumer (${mode})" "${build}/consumer_cxx20")
  if(EXISTS "${build}/consumer_nvcc")
    run_step("running the nvcc consumer (${mode})" "${build}/consumer_nvcc")
  endif()
endforeach()
