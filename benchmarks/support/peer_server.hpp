// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// A peer benchmark (NumPy, PyTorch) as a server process, so that its measurements alternate
// with resident's under the same conditions: the peer prints "ready" once its data is made,
// then answers each request line with one line, the seconds the request took.

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

namespace resident::bench {

/// A server process run by `sh -c command`, talked to through its stdin and stdout.
/// `running()` is false where it did not start (no Python, NumPy or PyTorch) or has failed.
class PeerServer {
 public:
  explicit PeerServer(std::string command) : command_(std::move(command)) {
    int to_child[2], from_child[2];  // NOLINT(modernize-avoid-c-arrays): pipe(2)'s type
    if (::pipe(to_child) != 0) return;
    if (::pipe(from_child) != 0) {
      ::close(to_child[0]), ::close(to_child[1]);
      return;
    }
    child_ = ::fork();
    if (child_ == 0) {
      ::dup2(to_child[0], STDIN_FILENO);
      ::dup2(from_child[1], STDOUT_FILENO);
      for (const int fd : {to_child[0], to_child[1], from_child[0], from_child[1]}) ::close(fd);
      ::execl("/bin/sh", "sh", "-c", command_.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(to_child[0]);
    ::close(from_child[1]);
    requests_ = ::fdopen(to_child[1], "w");
    answers_ = ::fdopen(from_child[0], "r");
    char line[64];  // NOLINT(modernize-avoid-c-arrays): fgets' buffer
    running_ = child_ > 0 && requests_ != nullptr && answers_ != nullptr &&
               std::fgets(line, sizeof line, answers_) != nullptr && std::string(line) == "ready\n";
  }
  ~PeerServer() {
    if (requests_ != nullptr) std::fclose(requests_);  // the server ends at the end of stdin
    if (answers_ != nullptr) std::fclose(answers_);
    if (child_ > 0) (void)::waitpid(child_, nullptr, 0);
  }
  PeerServer(const PeerServer&) = delete;
  PeerServer& operator=(const PeerServer&) = delete;

  [[nodiscard]] bool running() const noexcept { return running_; }
  [[nodiscard]] const std::string& command() const noexcept { return command_; }

  /// Sends `request` (one line, its newline included) and returns the seconds the peer
  /// answers, or nothing once the server has failed (it then stays failed).
  std::optional<double> ask(const std::string& request) {
    char line[64];  // NOLINT(modernize-avoid-c-arrays): fgets' buffer
    if (!running_ || std::fputs(request.c_str(), requests_) < 0 || std::fflush(requests_) != 0 ||
        std::fgets(line, sizeof line, answers_) == nullptr) {
      running_ = false;
      return std::nullopt;
    }
    return std::strtod(line, nullptr);
  }

 private:
  std::string command_;
  pid_t child_ = -1;
  FILE* requests_ = nullptr;
  FILE* answers_ = nullptr;
  bool running_ = false;
};

}  // namespace resident::bench
