// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "resident/error.hpp"

/// @brief Argument check that stays on in Release builds: throws `resident::InvalidArgument`
/// when `condition` is false. `message` is any expression convertible to `std::string` and is
/// evaluated only on failure, so it may format figures freely.
#define RESIDENT_EXPECTS(condition, message)                                                    \
  do {                                                                                          \
    if (!(condition)) throw ::resident::InvalidArgument(std::string("resident: ") + (message)); \
  } while (false)
