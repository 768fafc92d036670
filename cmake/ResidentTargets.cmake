# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
# Settings for resident's own tests, examples and benchmarks; never applied to consumers.

if(RESIDENT_ENABLE_CUDA)
  enable_language(CUDA)
  set(RESIDENT_HAS_CUDA_COMPILER ON)
else()
  set(RESIDENT_HAS_CUDA_COMPILER OFF)
endif()

# resident_python_with(<out> <import> <candidate>...): the first candidate interpreter that runs
# `import <import>` (e.g. "numpy" or "sklearn, numpy"), or empty; a python3 on PATH without a
# package (a fresh pyenv) must not shadow a system Python that has it.
function(resident_python_with out import)
  set(found "")
  foreach(candidate IN LISTS ARGN)
    if(candidate AND NOT found)
      execute_process(COMMAND "${candidate}" -c "import ${import}"
        RESULT_VARIABLE missing OUTPUT_QUIET ERROR_QUIET)
      if(missing EQUAL 0)
        set(found "${candidate}")
      endif()
    endif()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# resident_configure_target(<target>): warnings (as errors unless disabled), C++17, and for
# targets with CUDA sources the architectures and a CUDA runtime that matches the one the
# library links (two runtimes in one process would not share contexts).
function(resident_configure_target target)
  target_compile_features(${target} PRIVATE cxx_std_17)
  set(werror "")
  set(cuda_werror "")
  if(RESIDENT_WARNINGS_AS_ERRORS)
    set(werror -Werror)
    set(cuda_werror -Xcompiler=-Werror --Werror=all-warnings)
  endif()
  # -Wpedantic is for g++ only: nvcc's own generated line directives trip it.
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic ${werror}>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra ${cuda_werror}>)
  if(RESIDENT_HAS_CUDA_COMPILER)
    if(RESIDENT_CUDA_STATIC_RUNTIME)
      set(runtime Static)
    else()
      set(runtime Shared)
    endif()
    set_target_properties(${target} PROPERTIES
      CUDA_ARCHITECTURES "${RESIDENT_CUDA_ARCHITECTURES}"
      CUDA_STANDARD 17
      CUDA_STANDARD_REQUIRED ON
      CUDA_RUNTIME_LIBRARY ${runtime})
  endif()
endfunction()

# resident_skipped_test(<name> <reason> [LABELS <label>...]): a test standing for what this build
# could not make for want of an optional dependency, reported as skipped with <reason>
# (scripts/test-report.py groups skips by the text before its first ": "), so that what a build
# left out shows in the test report instead of being absent from it.
function(resident_skipped_test name reason)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "LABELS")
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} -E echo "${name}: skipped: ${reason}")
  set_tests_properties(${name} PROPERTIES SKIP_REGULAR_EXPRESSION ": skipped: ")
  if(arg_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${arg_LABELS}")
  endif()
endfunction()
