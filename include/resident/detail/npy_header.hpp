// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace resident::detail {

/// What a `.npy` header dict says, before any check of its meaning.
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<std::size_t> shape;
};

/// @brief Parses the exact dict NumPy writes: `{'descr': <str>, 'fortran_order': <bool>,
/// 'shape': <tuple of ints>}`, keys in any order, each once, nothing else; Python literal
/// syntax for the values (quotes of either kind, `True`/`False`, tuples with an optional
/// trailing comma). Never evaluates anything.
/// @param fail called with (offset within the header, reason); must not return
template <class Fail>
NpyHeader parse_npy_header(std::string_view text, Fail&& fail) {
  std::size_t at = 0;
  const auto skip_space = [&] {
    while (at < text.size() &&
           (text[at] == ' ' || text[at] == '\t' || text[at] == '\n' || text[at] == '\r'))
      ++at;
  };
  const auto expect = [&](char c, const char* what) {
    skip_space();
    if (at >= text.size() || text[at] != c)
      fail(at, std::string("the header dict is malformed: expected ") + what);
    ++at;
  };
  const auto peek = [&](char c) {
    skip_space();
    return at < text.size() && text[at] == c;
  };
  const auto parse_string = [&]() -> std::string {
    skip_space();
    if (at >= text.size() || (text[at] != '\'' && text[at] != '"'))
      fail(at, "expected a quoted string in the header dict");
    const char quote = text[at++];
    std::string value;
    while (at < text.size() && text[at] != quote) {
      if (text[at] == '\\') fail(at, "escape sequences are not part of a NumPy header");
      value += text[at++];
    }
    if (at >= text.size()) fail(at, "a string in the header dict is not closed");
    ++at;
    return value;
  };
  const auto parse_integer = [&]() -> std::size_t {
    skip_space();
    if (at < text.size() && text[at] == '-') fail(at, "a dimension of the shape is negative");
    if (at >= text.size() || text[at] < '0' || text[at] > '9')
      fail(at, "a dimension of the shape is not a non-negative integer");
    std::size_t value = 0;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
      const auto digit = static_cast<std::size_t>(text[at] - '0');
      if (value > (std::numeric_limits<std::size_t>::max() - digit) / 10)
        fail(at, "a dimension of the shape overflows 64 bits");
      value = value * 10 + digit;
      ++at;
    }
    if (at < text.size() && (text[at] == '.' || text[at] == 'e' || text[at] == 'E' ||
                             text[at] == 'L' || text[at] == 'j'))
      fail(at, "a dimension of the shape is not an integer");
    return value;
  };

  NpyHeader header;
  bool seen_descr = false, seen_order = false, seen_shape = false;
  expect('{', "'{'");
  while (!peek('}')) {
    const std::size_t key_at = at;
    const std::string key = parse_string();
    expect(':', "':' after a key");
    if (key == "descr") {
      if (seen_descr) fail(key_at, "the key 'descr' appears twice");
      seen_descr = true;
      if (peek('[')) fail(at, "structured (record) dtypes are not supported");
      header.descr = parse_string();
    } else if (key == "fortran_order") {
      if (seen_order) fail(key_at, "the key 'fortran_order' appears twice");
      seen_order = true;
      skip_space();
      if (text.substr(at, 4) == "True") {
        header.fortran_order = true;
        at += 4;
      } else if (text.substr(at, 5) == "False") {
        at += 5;
      } else {
        fail(at, "'fortran_order' must be True or False");
      }
    } else if (key == "shape") {
      if (seen_shape) fail(key_at, "the key 'shape' appears twice");
      seen_shape = true;
      expect('(', "'(' to open the shape tuple");
      while (!peek(')')) {
        header.shape.push_back(parse_integer());
        if (peek(',')) {
          ++at;
        } else if (!peek(')')) {
          fail(at, "the shape tuple is malformed: expected ',' or ')'");
        } else if (header.shape.size() == 1) {
          fail(at, "a one-element shape tuple needs its trailing comma, as (n,)");
        }
      }
      ++at;
    } else {
      fail(key_at, "unexpected key '" + key +
                       "' in the header dict (only 'descr', 'fortran_order', 'shape')");
    }
    if (peek(',')) {
      ++at;
    } else if (!peek('}')) {
      fail(at, "the header dict is malformed: expected ',' or '}'");
    }
  }
  ++at;
  if (!seen_descr) fail(at, "the header dict has no 'descr'");
  if (!seen_order) fail(at, "the header dict has no 'fortran_order'");
  if (!seen_shape) fail(at, "the header dict has no 'shape'");
  skip_space();
  if (at != text.size()) fail(at, "unexpected text after the header dict");
  return header;
}

}  // namespace resident::detail
