// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// A byte-level language model trained on text the machine already has: the Python standard
// library's sources, found at run time (no download). The bytes are tokens (0..255, stored as
// std::uint16_t) in a resident TokenDataset: one upload, then windows of `--window` tokens
// and their next tokens served as batches. The model (byte_lm.hpp) predicts each byte from the
// `--order` bytes before it: embeddings -> hidden 256, ReLU -> 256 logits, Adam.
//
//   train_tokens [--text PATH] [--suffix .py] [--bytes N] [--epochs N] [--batch B]
//                [--window W] [--order K] [--rate R] [--seed S] [--device host|cuda|both]
//                [--mix W1,W2 [--mix-text PATH] [--mix-suffix .h]]
//
// PATH is a file, or a directory whose files ending in `--suffix` are read recursively;
// without it, the first /usr/lib/python3.* or /usr/local/lib/python3.* that holds .py files.
// The files are taken in a fixed shuffled order until `--bytes` bytes are read, and about a
// tenth of those bytes, in whole files, is held out (one file: its last tenth). The model is
// trained twice from the same start, on `Shuffle::samples` epochs (windows at random positions,
// gathered) and on `Shuffle::none` epochs (consecutive windows in file order, zero-copy
// views), and the held-out cross-entropy of both is printed in bits per byte beside that of
// the unigram baseline (the training bytes' frequencies). Runs on the host (OpenBLAS) and on a
// CUDA device (cuBLAS and the kernels of byte_lm_cuda.cu) when nvcc built it and one is
// present.
//
// With `--mix W1,W2` the model is trained once, on a mixture of two sources in the weights
// given: the text above, and a second text (`--mix-text`, files ending in `--mix-suffix`; by
// default the C headers under /usr/include). Each source is read and held out as above, and
// the training windows are a `resident::Mixture` of the two token datasets whose period is the
// batch, so that every batch holds each source's exact share; the held-out cross-entropy is
// printed per source beside its unigram baseline.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

#include "byte_lm.hpp"
#include "flags.hpp"
#include "resident/resident.hpp"
#if defined(__CUDACC__) && RESIDENT_HAS_CUDA
#include "byte_lm_cuda.hpp"
#endif

namespace {

namespace fs = std::filesystem;

struct Arguments {
  std::string text, suffix = ".py", device = "both";
  std::string mix, mix_text, mix_suffix = ".h";  // --mix: the weights; the second text
  std::array<double, 2> weights{};               // --mix, parsed
  std::size_t bytes = 600000, epochs = 1, batch = 16, window = 64, order = 8;
  std::uint64_t seed = 1;
  float rate = 0.004f;
};

/// Where the text comes from: a file, or the files under a directory, sorted by path.
struct Text {
  fs::path root;
  std::vector<fs::path> files;
};

/// PATH itself, the files under it ending in `suffix`, or those of the first Python standard
/// library found; the paths are sorted so that every run reads the same bytes.
Text find_text(const std::string& path, const std::string& suffix) {
  const auto files_under = [&](const fs::path& directory) {
    Text text{directory, {}};
    for (const auto& entry : fs::recursive_directory_iterator(directory)) {
      const std::string name = entry.path().filename().string();
      if (entry.is_regular_file() && name.size() >= suffix.size() &&
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
        text.files.push_back(entry.path());
    }
    std::sort(text.files.begin(), text.files.end());
    return text;
  };
  if (!path.empty()) {
    if (!fs::exists(path))
      throw std::runtime_error("no file or directory " + path + "; give an existing one");
    if (fs::is_regular_file(path)) return Text{path, {path}};
    if (!fs::is_directory(path))
      throw std::runtime_error(path + " is neither a file nor a directory; give one that is");
    return files_under(path);
  }
  std::vector<fs::path> libraries;
  for (const char* root : {"/usr/lib", "/usr/local/lib"}) {
    std::error_code absent;  // a missing root is skipped
    for (const auto& entry : fs::directory_iterator(root, absent))
      if (entry.is_directory() && entry.path().filename().string().rfind("python3.", 0) == 0)
        libraries.push_back(entry.path());
  }
  std::sort(libraries.begin(), libraries.end());
  for (const auto& library : libraries)
    if (Text text = files_under(library); !text.files.empty()) return text;
  return {};
}

/// The text as byte tokens: a training stream and a held-out stream.
struct Corpus {
  std::vector<std::uint16_t> train, held_out;
  std::size_t files = 0;  // files read, whole or in part
};

/// The first `limit` bytes of the files taken in a fixed shuffled order, so that a small limit
/// still samples the whole library rather than its alphabetical start. Whole files go to the
/// held-out stream while it holds under a tenth of the bytes read: the model is scored on
/// files it never saw.
Corpus read_corpus(const std::vector<fs::path>& files, std::size_t limit) {
  Corpus corpus;
  const resident::Permutation order(files.size(), 0, 0);
  std::vector<char> buffer;
  for (std::size_t i = 0; i < files.size() && corpus.train.size() + corpus.held_out.size() < limit;
       ++i) {
    std::ifstream in(files[order(i)], std::ios::binary);
    buffer.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    const std::size_t take =
        std::min(buffer.size(), limit - corpus.train.size() - corpus.held_out.size());
    auto& stream =
        corpus.held_out.size() * 9 < corpus.train.size() ? corpus.held_out : corpus.train;
    for (std::size_t b = 0; b < take; ++b) stream.push_back(static_cast<unsigned char>(buffer[b]));
    ++corpus.files;
  }
  if (corpus.held_out.empty()) {  // a single file: its last tenth is held out instead
    const auto tail = corpus.train.end() - static_cast<std::ptrdiff_t>(corpus.train.size() / 10);
    corpus.held_out.assign(tail, corpus.train.end());
    corpus.train.erase(tail, corpus.train.end());
  }
  return corpus;
}

/// Bits per byte of the unigram baseline (the byte frequencies of `train`, add-one smoothed so
/// that a byte unseen in training costs bits, not infinity) on the held-out bytes the model is
/// scored on: in each of `windows` windows of `window` tokens, the targets with `order` bytes
/// of context, held_out[w * window + order, (w + 1) * window].
double unigram_bits(const std::vector<std::uint16_t>& train,
                    const std::vector<std::uint16_t>& held_out, std::size_t windows,
                    std::size_t window, std::size_t order) {
  std::array<double, 256> frequency{};
  frequency.fill(1.0);
  for (const std::uint16_t token : train) frequency[token] += 1;
  const double total = static_cast<double>(train.size() + frequency.size());
  double bits = 0, count = 0;
  for (std::size_t w = 0; w < windows; ++w)
    for (std::size_t i = w * window + order; i <= (w + 1) * window; ++i, ++count)
      bits -= std::log2(frequency[held_out[i]] / total);
  return bits / count;
}

using Clock = std::chrono::steady_clock;

template <class Space>
struct Path;
template <>
struct Path<resident::HostSpace> {
  using Model = examples::HostByteLm;
};
#if defined(__CUDACC__) && RESIDENT_HAS_CUDA
template <>
struct Path<resident::CudaSpace> {
  using Model = examples::CudaByteLm;
};
#endif

/// A model on `Space` whose kernels run on `stream` (the training set's).
template <class Space, class Stream>
typename Path<Space>::Model make_model(const Arguments& args, Stream stream) {
  const examples::ByteLmShape shape{args.order, 16, 256, args.window, args.batch};
  using Model = typename Path<Space>::Model;
  if constexpr (std::is_same_v<Space, resident::HostSpace>) {
    (void)stream;
    return Model(shape, args.seed);
  } else {
    return Model(shape, args.seed, stream);
  }
}

/// Held-out cross-entropy (bits per byte) after training from scratch on `shuffle` epochs, and
/// the number of held-out windows it was measured on.
struct Trained {
  double bits = 0;
  std::size_t windows = 0;
};

/// The options of every dataset here: `args.batch` windows a batch, and the remainder given.
resident::DatasetOptions dataset_options(const Arguments& args, resident::Remainder remainder) {
  resident::DatasetOptions options;
  options.batch_size = args.batch;
  options.remainder = remainder;
  return options;
}

/// A token dataset of `tokens` in windows that tile the stream (stride = context), so that
/// unshuffled batches are zero-copy views of it. The model predicts the positions with `order`
/// bytes of context in the window: each window's first order - 1 targets are context only.
template <class Space>
resident::TokenDataset<Space, std::uint16_t> token_dataset(const Space& space,
                                                           const std::vector<std::uint16_t>& tokens,
                                                           const Arguments& args,
                                                           resident::Remainder remainder) {
  return {space, dataset_options(args, remainder), resident::TokenOptions{args.window},
          resident::HostTensor<const std::uint16_t>(tokens.data(), {tokens.size()})};
}

/// Bits per byte of `model` on every window of `held_out`, read on `stream` (the model's).
template <class Model, class Dataset, class Stream>
double held_out_bits(Model& model, Dataset& held_out, Stream stream, std::uint64_t seed) {
  // The held-out batches are served on held_out.stream() and read on the model's stream: wait
  // orders the reads after the batch, release the batch's next use after the reads (both
  // no-ops on the host and for views of a preloaded stream).
  auto evaluation = held_out.epoch({seed, 0, resident::Shuffle::none});
  for (std::size_t k = 0; k < evaluation.size(); ++k) {
    const auto [x, y] = evaluation.batch(k);
    evaluation.wait(k, stream);
    model.evaluate(x.data(), y.data(), x.rows());
    evaluation.release(k, stream);
  }
  const examples::LmTotals tested = model.take_totals();
  return tested.loss / tested.predictions / std::log(2.0);
}

/// Trains `model` for one epoch of `train_set` and prints the training figures.
template <class Model, class Dataset>
void train_epoch(Model& model, Dataset& train_set, const resident::EpochOptions& options,
                 examples::AdamStep& adam, const char* what) {
  const auto start = Clock::now();
  for (auto [x, y] : train_set.epoch(options)) {
    model.train_step(x.data(), y.data(), x.rows(), adam);
    ++adam.step;
  }
  const examples::LmTotals trained = model.take_totals();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("epoch %llu (%s): training %.3f bits/byte, %.3g predictions/s\n",
              static_cast<unsigned long long>(options.epoch), what,
              trained.loss / trained.predictions / std::log(2.0), trained.predictions / seconds);
}

template <class Space>
Trained train(const Space& space, const Corpus& corpus, resident::Shuffle shuffle,
              const Arguments& args) {
  // Every training step a full batch; every held-out window scored.
  auto train_set = token_dataset(space, corpus.train, args, resident::Remainder::drop);
  auto held_out = token_dataset(space, corpus.held_out, args, resident::Remainder::partial);
  auto model = make_model<Space>(args, train_set.stream());
  examples::AdamStep adam{args.rate};
  double bits = 0;
  for (std::size_t epoch = 0; epoch < args.epochs; ++epoch) {
    train_epoch(model, train_set, {args.seed, epoch, shuffle}, adam,
                shuffle == resident::Shuffle::samples ? "samples" : "no shuffle");
    bits = held_out_bits(model, held_out, train_set.stream(), args.seed);
    std::printf("epoch %zu: held-out %.3f bits/byte\n", epoch, bits);
  }
  return {bits, held_out.num_rows()};
}

template <class Space>
void train_and_report(const Space& space, const Corpus& corpus, const Arguments& args) {
  std::printf(
      "train_tokens: on %s: %zu bytes for training, %zu held out; windows of %zu bytes, %zu per "
      "batch, each byte predicted from the %zu before it\n",
      space.name().c_str(), corpus.train.size(), corpus.held_out.size(), args.window, args.batch,
      args.order);
  const Trained samples = train(space, corpus, resident::Shuffle::samples, args);
  const Trained none = train(space, corpus, resident::Shuffle::none, args);
  const double unigram =
      unigram_bits(corpus.train, corpus.held_out, samples.windows, args.window, args.order);
  std::printf(
      "train_tokens: %s: held-out bits/byte: unigram %.2f, model (samples) %.2f, model (no "
      "shuffle) %.2f; gain over unigram %.2f bits/byte\n",
      space.name().c_str(), unigram, samples.bits, none.bits, unigram - samples.bits);
}

/// Trains one model on a mixture of the two corpora's training windows in `weights`, each batch
/// holding each source's exact share, and prints each source's held-out bits beside its
/// unigram baseline.
template <class Space>
void train_mixture(const Space& space, const std::array<Corpus, 2>& corpora,
                   const std::array<double, 2>& weights, const Arguments& args) {
  using Tokens = resident::TokenDataset<Space, std::uint16_t>;
  using Mixture = resident::Mixture<Space, std::uint16_t, std::uint16_t>;
  const std::array<Tokens, 2> sources{
      token_dataset(space, corpora[0].train, args, resident::Remainder::drop),
      token_dataset(space, corpora[1].train, args, resident::Remainder::drop)};
  // A period of one batch: every step holds each source's share. An epoch serves as many
  // windows as the two sources hold (rounded up to whole batches), so a batch of more
  // windows than that would serve them several times in each.
  const std::size_t windows = sources[0].num_rows() + sources[1].num_rows();
  if (args.batch > windows)
    throw std::runtime_error("--batch " + std::to_string(args.batch) + " is more than the " +
                             std::to_string(windows) +
                             " training windows of the two texts; give a smaller --batch");
  Mixture train_set = [&] {
    try {
      return Mixture(
          {sources[0], sources[1]},
          {resident::MixtureShare::weight(weights[0]), resident::MixtureShare::weight(weights[1])},
          resident::MixtureOptions{args.batch, 0},
          dataset_options(args, resident::Remainder::drop));
    } catch (const resident::InvalidArgument& error) {
      throw std::runtime_error(std::string(error.what()) +
                               " (here the period is --batch: give a larger --batch, or weights "
                               "that give each source a window of every batch)");
    }
  }();
  std::printf(
      "train_tokens: on %s: a mixture of %zu and %zu training windows of %zu bytes; each batch "
      "of %zu holds %llu of source 1 and %llu of source 2, %zu batches an epoch\n",
      space.name().c_str(), sources[0].num_rows(), sources[1].num_rows(), args.window, args.batch,
      static_cast<unsigned long long>(train_set.order().quota(0)),
      static_cast<unsigned long long>(train_set.order().quota(1)), train_set.num_batches());
  auto model = make_model<Space>(args, train_set.stream());
  examples::AdamStep adam{args.rate};
  for (std::size_t epoch = 0; epoch < args.epochs; ++epoch)
    train_epoch(model, train_set, {args.seed, epoch, resident::Shuffle::samples}, adam, "mixture");
  for (std::size_t s = 0; s < corpora.size(); ++s) {
    auto held_out = token_dataset(space, corpora[s].held_out, args, resident::Remainder::partial);
    const double bits = held_out_bits(model, held_out, train_set.stream(), args.seed);
    const double unigram = unigram_bits(corpora[s].train, corpora[s].held_out, held_out.num_rows(),
                                        args.window, args.order);
    std::printf(
        "train_tokens: %s: mixture source %zu (weight %.3g): held-out bits/byte: unigram %.2f, "
        "model %.2f; gain over unigram %.2f bits/byte\n",
        space.name().c_str(), s + 1, weights[s], unigram, bits, unigram - bits);
  }
}

/// "W1,W2": the two weights of `--mix`.
bool parse_weights(const std::string& text, std::array<double, 2>& weights) {
  std::istringstream in(text);
  char comma = 0;
  return static_cast<bool>(in >> weights[0] >> comma >> weights[1]) && comma == ',' && in.eof();
}

bool parse(int argc, char** argv, Arguments& args) {
  const bool parsed = examples::Flags()
                          .add("text", args.text)
                          .add("suffix", args.suffix)
                          .add("bytes", args.bytes)
                          .add("epochs", args.epochs)
                          .add("batch", args.batch)
                          .add("window", args.window)
                          .add("order", args.order)
                          .add("rate", args.rate)
                          .add("seed", args.seed)
                          .add("device", args.device)
                          .add("mix", args.mix)
                          .add("mix-text", args.mix_text)
                          .add("mix-suffix", args.mix_suffix)
                          .parse(argc, argv);
  // --mix-text names the second text of a mixture: without --mix, a mistake.
  return parsed &&
         (args.mix.empty() ? args.mix_text.empty() : parse_weights(args.mix, args.weights)) &&
         (args.device == "host" || args.device == "cuda" || args.device == "both") &&
         args.batch > 0 && args.order > 0 && args.window >= args.order;
}

}  // namespace

/// The corpus of `path` (files ending in `suffix`), or none when no text is found there.
/// @throws std::runtime_error when its training or held-out bytes make no window.
bool read_text(const std::string& path, const std::string& suffix, const Arguments& args,
               Corpus& corpus) {
  const Text text = find_text(path, suffix);
  if (text.files.empty()) return false;
  corpus = read_corpus(text.files, args.bytes);
  std::printf("train_tokens: %zu bytes of %zu of the %zu files under %s\n",
              corpus.train.size() + corpus.held_out.size(), corpus.files, text.files.size(),
              text.root.c_str());
  for (const auto* part : {&corpus.train, &corpus.held_out})
    if (part->size() < args.window + 1)
      throw std::runtime_error(
          "the text under " + text.root.string() + " gives " + std::to_string(part->size()) +
          (part == &corpus.train ? " training bytes" : " held-out bytes (a tenth)") +
          ", fewer than one window of --window " + std::to_string(args.window) +
          " bytes and its next byte; give more text (--bytes) or a smaller --window");
  return true;
}

int main(int argc, char** argv) {
  Arguments args;
  if (!parse(argc, argv, args)) {
    std::fprintf(stderr,
                 "usage: train_tokens [--text PATH] [--suffix .py] [--bytes N] [--epochs N] "
                 "[--batch B] [--window W] [--order K] [--rate R] [--seed S] "
                 "[--device host|cuda|both] [--mix W1,W2 [--mix-text PATH] [--mix-suffix .h]]\n");
    return 2;
  }
  try {
    std::array<Corpus, 2> corpora;
    if (!read_text(args.text, args.suffix, args, corpora[0])) {
      std::printf(
          "train_tokens: skipped: no text found (no Python standard library sources); pass "
          "--text PATH\n");
      return 0;
    }
    // The C headers by default: a skip where there are none; a text given must hold files.
    const std::string mixed = args.mix_text.empty() ? "/usr/include" : args.mix_text;
    if (!args.mix.empty() && !read_text(mixed, args.mix_suffix, args, corpora[1])) {
      if (!args.mix_text.empty()) {
        std::fprintf(stderr, "train_tokens: no files ending in %s under %s to mix\n",
                     args.mix_suffix.c_str(), mixed.c_str());
        return 1;
      }
      std::printf(
          "train_tokens: skipped: no files ending in %s under %s to mix; pass --mix-text "
          "PATH\n",
          args.mix_suffix.c_str(), mixed.c_str());
      return 0;
    }
    const auto run = [&](const auto& space) {
      if (args.mix.empty())
        train_and_report(space, corpora[0], args);
      else
        train_mixture(space, corpora, args.weights, args);
    };
    if (args.device != "cuda") run(resident::HostSpace{});
    if (args.device == "host") return 0;
#if defined(__CUDACC__) && RESIDENT_HAS_CUDA
    if (resident::CudaSpace::device_count() > 0) {
      run(resident::CudaSpace{0});
      return 0;
    }
    std::printf("train_tokens: cuda: skipped: no CUDA device: the machine has none\n");
#else
    std::printf("train_tokens: cuda: skipped: built without nvcc\n");
#endif
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "train_tokens: %s\n", error.what());
    return 1;
  }
}
