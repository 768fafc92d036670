// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "resident/error.hpp"

/// @brief Argument check that stays on in Release builds: throws `resident::InvalidArgument`
/// when `condition` is false. `message` is any expression convertible to `std::string` and is
/// evaluated only on failure, so it may format figures freely. The message is the caller's to
/// act on: it says what was wrong and what to do, and names no place in resident's sources.
#define RESIDENT_EXPECTS(condition, message)                                                    \
  do {                                                                                          \
    if (!(condition)) throw ::resident::InvalidArgument(std::string("resident: ") + (message)); \
  } while (false)

namespace resident::detail {

/// @brief Throws the `Error` of a broken internal invariant. Such a failure is a bug in resident,
/// not the caller's mistake, and what finds the bug is the place in the sources: the message
/// names the file, the line and the condition, as a failed CUDA call's names its place.
[[noreturn]] inline void throw_broken_invariant(const char* condition, const char* file, int line,
                                                const std::string& message) {
  throw Error(std::string("resident: internal invariant broken at ") + file + ":" +
              std::to_string(line) + " (" + condition + "): " + message +
              "; this is a bug in resident: please report it with this message");
}

}  // namespace resident::detail

/// @brief Internal invariant check that stays on in Release builds: throws `resident::Error`
/// naming `__FILE__:__LINE__` and the condition when `condition` is false. For what resident
/// itself guarantees, which no argument of the caller can break; a check of the caller's
/// arguments is `RESIDENT_EXPECTS`. `message` is evaluated only on failure, as there.
#define RESIDENT_INVARIANT(condition, message)                                               \
  do {                                                                                       \
    if (!(condition))                                                                        \
      ::resident::detail::throw_broken_invariant(#condition, __FILE__, __LINE__, (message)); \
  } while (false)
