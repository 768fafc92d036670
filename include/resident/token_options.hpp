// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `TokenOptions`: how a token stream is cut into the windows a language model trains
/// on.

#include <cstddef>

namespace resident {

/// @brief How a token stream is cut into windows: window `w` is tokens
/// `[w * stride, w * stride + context + 1)`; a batch row's inputs `x` are its first `context`
/// tokens and its targets `y` its last `context` (the inputs one token on).
struct TokenOptions {
  std::size_t context = 0;  ///< Tokens of a row of `x` and of `y` (the model's context length).
  /// Tokens from one window's start to the next's; 0: `context`, so that consecutive windows
  /// tile the stream (the llm.c layout: a batch's inputs are one contiguous span).
  std::size_t stride = 0;
};

}  // namespace resident
