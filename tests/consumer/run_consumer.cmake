# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
# Installs resident to a scratch prefix, then configures, builds and runs the consumer
# project three times: finding the installed package, through add_subdirectory, and finding
# the package from a g++-only toolchain (no CUDA toolkit found, no nvcc on PATH).
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

# The same package from a g++-only consumer: no CUDA toolkit to find and no nvcc on PATH (as on
# a machine without the toolkit, whatever the machine that installed the package had). It must
# configure, build and run with HostSpace alone.
set(host_path "")
string(REPLACE ":" ";" path_entries "$ENV{PATH}")
foreach(entry IN LISTS path_entries)
  if(NOT EXISTS "${entry}/nvcc")
    list(APPEND host_path "${entry}")
  endif()
endforeach()
string(JOIN ":" host_path ${host_path})
set(build "${WORK_DIR}/consumer-host-only")
set(host_env ${CMAKE_COMMAND} -E env --unset=CUDACXX --unset=CUDA_PATH "PATH=${host_path}")
run_step("configuring the g++-only consumer" ${host_env} ${CMAKE_COMMAND}
  -S "${CMAKE_CURRENT_LIST_DIR}" -B "${build}" -G "${GENERATOR}"
  -DCMAKE_PREFIX_PATH=${prefix} -DCONSUMER_MODE=find_package
  -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON -DCONSUMER_EXPECT_CUDA=OFF)
run_step("building the g++-only consumer" ${host_env} ${CMAKE_COMMAND} --build "${build}")
run_step("running the g++-only consumer" "${build}/consumer")
if(EXISTS "${build}/consumer_nvcc")
  message(FATAL_ERROR "consumer test: the g++-only consumer built an nvcc program")
endif()
# A project that calls find_package(resident) again, asking for what the first call did not
# give, is refused with the reason rather than handed a target that does not match.
run_step("configuring the repeated-find consumer" ${CMAKE_COMMAND}
  -S "${CMAKE_CURRENT_LIST_DIR}/repeated" -B "${WORK_DIR}/consumer-repeated" -G "${GENERATOR}"
  -DCMAKE_PREFIX_PATH=${prefix})

if(ENABLE_CUDA)
  # ... and a consumer that asks for CUDA there is told why it cannot have it.
  execute_process(COMMAND ${host_env} ${CMAKE_COMMAND} -S "${CMAKE_CURRENT_LIST_DIR}"
    -B "${build}-cuda-required" -G "${GENERATOR}" -DCMAKE_PREFIX_PATH=${prefix}
    -DCONSUMER_MODE=find_package -DCONSUMER_COMPONENTS=CUDA
    -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON
    RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(status EQUAL 0 OR NOT out MATCHES "the CUDA component was requested, but the CUDA toolkit")
    message(FATAL_ERROR "consumer test: find_package(resident COMPONENTS CUDA) without the "
      "toolkit should fail, naming the component; it exited ${status}:\n${out}")
  endif()
endif()
