// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Test support: a scratch .npy file, removed when the test ends, and crafted files written.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "resident/detail/file_io.hpp"
#include "resident/npy.hpp"

namespace resident::testing {

/// Makes `bytes` the whole content of the file at `path` (a crafted, possibly malformed file),
/// through the writer resident itself uses: replaced by a rename, never truncated in place.
inline void write_file(const std::string& path, const std::string& bytes) {
  resident::detail::replace_file(path, {{bytes.data(), bytes.size()}});
}

/// A scratch .npy file holding `values` with `shape`, removed at the end of the test; the name
/// carries the process id, so that tests running in parallel processes never share one.
struct TempNpy {
  template <class T>
  TempNpy(const std::string& name, const std::vector<T>& values, const Shape& shape)
      : path(::testing::TempDir() + name + "_" + std::to_string(::getpid()) + ".npy") {
    npy::save(path, values.data(), shape);
  }
  ~TempNpy() { std::remove(path.c_str()); }
  TempNpy(const TempNpy&) = delete;
  TempNpy& operator=(const TempNpy&) = delete;
  std::string path;
};

}  // namespace resident::testing
