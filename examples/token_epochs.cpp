// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Token streams in a few lines: llm.c shards (or 1-D .npy files) become language-model
// batches (x, y), y being x one token on. Without arguments it writes a small llm.c shard of
// its own first (a header of 256 int32: magic 20240520, version 1, the count; then uint16
// tokens), so that it runs anywhere. The loop counts the bigrams (x[r][t], y[r][t]) that a
// bigram model would learn from, and checks on the way that every target is its input's next
// token.
//
//   token_epochs [FILE.bin|FILE.npy ...]
#include <cstdint>
#include <cstdio>
#include <resident/resident.hpp>
#include <string>
#include <vector>

#include "llmc_shard.hpp"

namespace {

// An llm.c shard of `count` tokens of a repeating pattern, at `path`.
void write_shard(const std::string& path, std::size_t count) {
  std::vector<std::uint16_t> tokens(count);
  for (std::size_t i = 0; i < count; ++i) tokens[i] = static_cast<std::uint16_t>(i * 7 % 50257);
  examples::write_llmc_shard(path, tokens);
}

}  // namespace

int main(int argc, char** argv) try {
  std::vector<std::string> paths(argv + 1, argv + argc);
  if (paths.empty()) {
    paths.push_back("token_epochs_shard.bin");
    write_shard(paths.back(), 1'000'001);
  }
  // The loop, as docs/tokens.md gives it.
  resident::DatasetOptions options;
  options.batch_size = 64;                   // B: windows per batch
  const resident::TokenOptions window{256};  // T: tokens in a row of x and of y
  auto tokens = resident::load_token_file<std::uint16_t>(resident::HostSpace{}, options, window,
                                                         paths);  // preloads, or streams
  std::printf("%s\n", tokens.plan().reason.c_str());
  std::uint64_t bigrams = 0, wrong = 0;
  for (std::uint64_t epoch = 0; epoch < 2; ++epoch)
    for (auto [x, y] : tokens.epoch({/*seed*/ 1, epoch, resident::Shuffle::samples}))
      for (std::size_t r = 0; r < x.valid_rows(); ++r, bigrams += x.row_elements())
        for (std::size_t t = 0; t + 1 < x.row_elements(); ++t)
          wrong += y.row(r)[t] != x.row(r)[t + 1];

  std::printf(
      "token_epochs: %zu windows of %zu tokens, %zu batches an epoch, %s; 2 epochs: %llu "
      "bigrams, %llu targets that are not the next token\n",
      tokens.num_rows(), tokens.context(), tokens.num_batches(),
      tokens.is_streaming() ? "streamed" : "preloaded", static_cast<unsigned long long>(bigrams),
      static_cast<unsigned long long>(wrong));
  return wrong == 0 ? 0 : 1;
} catch (const resident::Error& error) {
  std::fprintf(stderr, "token_epochs: %s\n", error.what());
  return 1;
}
