// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// llm.c token shards into libtorch: `load_token_file<std::uint16_t>` reads the shards as they
// are (uint16 tokens, which libtorch has no tensors of before 2.3), and each epoch widens x and
// y to the int64 that torch::nn::Embedding and cross_entropy take as it gathers the windows
// (`Cast`), so `to_tensors` hands libtorch its batches without a copy or a conversion in the
// loop. A bigram model (an embedding of each token's next-token logits) learns the shard's
// rule, which takes the loss from ln(64) = 4.16 to near 0.
//
//   libtorch_tokens [FILE.bin ...] [--epochs N]
#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "llmc_shard.hpp"
#include "resident/resident.hpp"
#include "resident/torch.hpp"

namespace {

constexpr std::int64_t vocabulary = 64;

// An llm.c shard of `count` tokens that follow a rule (the next token is `5 t + 3 mod 64`), at
// `path`.
void write_shard(const std::string& path, std::size_t count) {
  std::vector<std::uint16_t> tokens(count);
  std::uint16_t token = 1;
  for (std::size_t i = 0; i < count; ++i, token = static_cast<std::uint16_t>((5 * token + 3) % 64))
    tokens[i] = token;
  examples::write_llmc_shard(path, tokens);
}

}  // namespace

int main(int argc, char** argv) try {
  std::vector<std::string> paths;
  std::uint64_t epochs = 3;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--epochs") == 0 && i + 1 < argc)
      epochs = std::stoull(argv[++i]);
    else
      paths.emplace_back(argv[i]);
  }
  if (paths.empty()) {
    paths.push_back("libtorch_tokens_shard.bin");
    write_shard(paths.back(), 200'001);
  }
  resident::DatasetOptions options;
  options.batch_size = 32;  // windows per batch
  auto tokens = resident::load_token_file<std::uint16_t>(resident::HostSpace{}, options,
                                                         resident::TokenOptions{64}, paths);
  torch::manual_seed(1);
  torch::nn::Embedding bigram(vocabulary, vocabulary);  // row t: the logits of t's next token
  torch::optim::Adam optimizer(bigram->parameters(), torch::optim::AdamOptions(0.1));
  double first_loss = 0, last_loss = 0;
  for (std::uint64_t e = 0; e < epochs; ++e) {
    // x and y widened from uint16 to int64 as the windows are gathered.
    auto epoch = tokens.epoch({/*seed*/ 7, e, resident::Shuffle::samples},
                              resident::convert<0>(resident::Cast<std::int64_t>{}),
                              resident::convert<1>(resident::Cast<std::int64_t>{}));
    double loss_sum = 0;
    for (std::size_t k = 0; k < epoch.size(); ++k) {
      auto [x, y] = resident::to_tensors(epoch, k);  // int64 (windows, 64), no copy
      auto loss = torch::nn::functional::cross_entropy(bigram->forward(x).view({-1, vocabulary}),
                                                       y.reshape({-1}));
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
      loss_sum += loss.item<double>();
      if (e == 0 && k == 0) first_loss = loss.item<double>();
    }
    last_loss = loss_sum / static_cast<double>(epoch.size());
    std::printf("epoch %llu: mean loss %.4f over %zu batches\n", static_cast<unsigned long long>(e),
                last_loss, epoch.size());
  }
  std::printf(
      "libtorch_tokens: %zu windows of %zu uint16 tokens as int64 tensors (%s); loss %.3f "
      "-> %.3f\n",
      tokens.num_rows(), tokens.context(), tokens.is_streaming() ? "streamed" : "preloaded",
      first_loss, last_loss);
  return last_loss < 0.1 * first_loss ? 0 : 1;
} catch (const resident::Error& error) {
  std::fprintf(stderr, "libtorch_tokens: %s\n", error.what());
  return 1;
}
