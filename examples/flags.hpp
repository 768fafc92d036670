// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The examples' command lines: "--name value" pairs, each bound to a variable.

#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <type_traits>

namespace examples {

class Flags {
 public:
  /// Binds `--name` to `target`: a string, or a number read with `operator>>`.
  template <class T>
  Flags& add(const std::string& name, T& target) {
    setters_["--" + name] = [&target](const std::string& value) {
      if constexpr (std::is_same_v<T, std::string>) {
        target = value;
        return true;
      } else {
        std::istringstream in(value);
        T parsed{};
        if (!(in >> parsed) || !in.eof()) return false;
        target = parsed;
        return true;
      }
    };
    return *this;
  }

  /// Sets the bound variables; false on an unknown flag, a flag without a value, or a value
  /// that is not a number where one is needed.
  [[nodiscard]] bool parse(int argc, char** argv) const {
    if (argc % 2 == 0) return false;
    for (int i = 1; i + 1 < argc; i += 2) {
      const auto setter = setters_.find(argv[i]);
      if (setter == setters_.end() || !setter->second(argv[i + 1])) return false;
    }
    return true;
  }

 private:
  std::map<std::string, std::function<bool(const std::string&)>> setters_;
};

}  // namespace examples
