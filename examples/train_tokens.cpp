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
  if (!path.empty()) return fs::is_regular_file(path) ? Text{path, {path}} : files_under(path);
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

/// Held-out cross-entropy (bits per byte) after training from scratch on `shuffle` epochs, and
/// the number of held-out windows it was measured on.
struct Trained {
  double bits = 0;
  std::size_t windows = 0;
};

template <class Space>
Trained train(const Space& space, const Corpus& corpus, resident::Shuffle shuffle,
              const Arguments& args) {
  using Dataset = resident::TokenDataset<Space, std::uint16_t>;
  // Windows tile the stream (stride = context), so that unshuffled batches are zero-copy views
  // of it. The model predicts the positions with `order` bytes of context in the window: each
  // window's first order - 1 targets are context only.
  const resident::TokenOptions windows{args.window};
  resident::DatasetOptions options;
  options.batch_size = args.batch;
  options.remainder = resident::Remainder::drop;  // every training step a full batch
  Dataset train_set(
      space, options, windows,
      resident::HostTensor<const std::uint16_t>(corpus.train.data(), {corpus.train.size()}));
  options.remainder = resident::Remainder::partial;  // every held-out window scored
  Dataset held_out(
      space, options, windows,
      resident::HostTensor<const std::uint16_t>(corpus.held_out.data(), {corpus.held_out.size()}));

  const examples::ByteLmShape shape{args.order, 16, 256, args.window, args.batch};
  using Model = typename Path<Space>::Model;
#if defined(__CUDACC__) && RESIDENT_HAS_CUDA
  Model model = [&]() -> Model {
    if constexpr (std::is_same_v<Space, resident::CudaSpace>)
      return Model(shape, args.seed, train_set.stream());
    else
      return Model(shape, args.seed);
  }();
#else
  Model model(shape, args.seed);
#endif
  examples::AdamStep adam{args.rate};
  double bits = 0;
  for (std::size_t epoch = 0; epoch < args.epochs; ++epoch) {
    const auto start = Clock::now();
    for (auto [x, y] : train_set.epoch({args.seed, epoch, shuffle})) {
      model.train_step(x.data(), y.data(), x.rows(), adam);
      ++adam.step;
    }
    const examples::LmTotals trained = model.take_totals();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    // The held-out batches are served on held_out.stream() and read on the model's stream,
    // train_set.stream(): wait orders the reads after the batch, release the batch's next
    // use after the reads (both no-ops on the host and for views of a preloaded stream).
    auto evaluation = held_out.epoch({args.seed, 0, resident::Shuffle::none});
    for (std::size_t k = 0; k < evaluation.size(); ++k) {
      const auto [x, y] = evaluation.batch(k);
      evaluation.wait(k, train_set.stream());
      model.evaluate(x.data(), y.data(), x.rows());
      evaluation.release(k, train_set.stream());
    }
    const examples::LmTotals tested = model.take_totals();
    bits = tested.loss / tested.predictions / std::log(2.0);
    std::printf(
        "epoch %zu (%s): training %.3f bits/byte, held-out %.3f bits/byte, %.3g predictions/s\n",
        epoch, shuffle == resident::Shuffle::samples ? "samples" : "no shuffle",
        trained.loss / trained.predictions / std::log(2.0), bits, trained.predictions / seconds);
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
                          .parse(argc, argv);
  return parsed && (args.device == "host" || args.device == "cuda" || args.device == "both") &&
         args.batch > 0 && args.order > 0 && args.window >= args.order;
}

}  // namespace

int main(int argc, char** argv) {
  Arguments args;
  if (!parse(argc, argv, args)) {
    std::fprintf(stderr,
                 "usage: train_tokens [--text PATH] [--suffix .py] [--bytes N] [--epochs N] "
                 "[--batch B] [--window W] [--order K] [--rate R] [--seed S] "
                 "[--device host|cuda|both]\n");
    return 2;
  }
  try {
    const Text text = find_text(args.text, args.suffix);
    if (text.files.empty()) {
      std::printf(
          "train_tokens: skipped: no text found (no Python standard library sources); pass "
          "--text PATH\n");
      return 0;
    }
    const Corpus corpus = read_corpus(text.files, args.bytes);
    std::printf("train_tokens: %zu bytes of %zu of the %zu files under %s\n",
                corpus.train.size() + corpus.held_out.size(), corpus.files, text.files.size(),
                text.root.c_str());
    if (args.device != "cuda") train_and_report(resident::HostSpace{}, corpus, args);
    if (args.device == "host") return 0;
#if defined(__CUDACC__) && RESIDENT_HAS_CUDA
    if (resident::CudaSpace::device_count() > 0) {
      train_and_report(resident::CudaSpace{0}, corpus, args);
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
