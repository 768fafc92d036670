// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Test support: where the checked-in .npy fixtures are.

#include <cstdlib>
#include <string>

namespace resident::testing {

/// Path of fixture `name` in tests/data: under $RESIDENT_TEST_DATA_DIR when set (a build carried
/// to another machine, whose checkout lies elsewhere; scripts/gpu-check.sh sets it), else
/// where the build found the sources.
inline std::string data_file(const std::string& name) {
  const char* moved = std::getenv("RESIDENT_TEST_DATA_DIR");
  return std::string(moved != nullptr ? moved : RESIDENT_TEST_DATA_DIR) + "/" + name;
}

}  // namespace resident::testing
