// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Test support: the host memory the loaders count on, set for a test through the environment.

#include <cstdlib>
#include <optional>
#include <string>

namespace resident::testing {

/// Sets RESIDENT_HOST_AVAILABLE_BYTES (the host memory the loaders count on) for its life, and
/// restores what was there.
class HostAvailable {
 public:
  explicit HostAvailable(const std::string& bytes) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, bytes.c_str(), 1);
  }
  ~HostAvailable() {
    if (old_)
      ::setenv(name, old_->c_str(), 1);
    else
      ::unsetenv(name);
  }
  HostAvailable(const HostAvailable&) = delete;
  HostAvailable& operator=(const HostAvailable&) = delete;

 private:
  static constexpr const char* name = "RESIDENT_HOST_AVAILABLE_BYTES";
  std::optional<std::string> old_;
};

}  // namespace resident::testing
