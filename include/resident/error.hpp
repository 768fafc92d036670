// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief The exceptions resident throws. Every one derives from `resident::Error` (itself a
/// `std::runtime_error`) and carries the figures behind its message, so callers can react to
/// the numbers rather than parse text.
///
/// A batch index past the end throws `std::out_of_range`, outside this hierarchy on purpose:
/// it is the standard library's error for an index past a container's end (what
/// `std::vector::at` throws), so that generic code treating datasets and epochs as ranges
/// catches the same type it catches for containers, and so that an index bug in a training
/// loop is not mistaken for a data or resource problem by a `catch (const resident::Error&)`
/// that retries or falls back. Its message still names the index, the batches, and the
/// cause (a moved-from dataset says so).

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

#include "resident/detail/format_bytes.hpp"
#include "resident/space_traits.hpp"

namespace resident {

/// @brief Base of every exception thrown by resident.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// @brief An argument that can never work: mismatched row counts, a zero batch size, a shape
/// whose byte size overflows `std::size_t`, a null pointer for non-empty data.
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

/// @brief The data does not fit in the memory space: raised by the capacity check before
/// anything is allocated, and also when an allocation fails after the check passed (another
/// process or dataset took the memory in between).
class CapacityError : public Error {
 public:
  /// @param space_name the space's `name()`, e.g. "cuda:0"
  /// @param needed_bytes bytes the dataset would allocate
  /// @param free_bytes bytes the space reported free
  /// @param total_bytes bytes the space holds in all
  /// @param reserve_bytes bytes the caller asked to leave free (for the model)
  /// @param advice what to do, in place of the default advice (compact dtype, shard, stream)
  /// @param subject what needed the bytes, as the message names it ("dataset" by default)
  CapacityError(std::string space_name, std::size_t needed_bytes, std::size_t free_bytes,
                std::size_t total_bytes, std::size_t reserve_bytes,
                const std::string& advice = default_advice, const std::string& subject = "dataset")
      : Error(message(space_name, needed_bytes, free_bytes, total_bytes, reserve_bytes, advice,
                      subject)),
        space_name_(std::move(space_name)),
        needed_bytes_(needed_bytes),
        free_bytes_(free_bytes),
        total_bytes_(total_bytes),
        reserve_bytes_(reserve_bytes) {}

  /// @brief The space's `name()`, e.g. "cuda:0".
  [[nodiscard]] const std::string& space_name() const noexcept { return space_name_; }
  /// @brief Bytes the refused dataset, ring or allocation needed.
  [[nodiscard]] std::size_t needed_bytes() const noexcept { return needed_bytes_; }
  /// @brief Bytes the space reported free, before the reserve is set aside.
  [[nodiscard]] std::size_t free_bytes() const noexcept { return free_bytes_; }
  /// @brief Bytes the space holds in all.
  [[nodiscard]] std::size_t total_bytes() const noexcept { return total_bytes_; }
  /// @brief Bytes the caller asked to leave free; 0 when the allocation itself failed.
  [[nodiscard]] std::size_t reserve_bytes() const noexcept { return reserve_bytes_; }

  /// @brief What a refused dataset can do instead.
  static constexpr const char* default_advice = "use a compact dtype, shard it, or stream it";

  /// @brief The sentence the exception carries; `plan()` uses it as its refusal reason.
  static std::string message(const std::string& space_name, std::size_t needed_bytes,
                             std::size_t free_bytes, std::size_t total_bytes,
                             std::size_t reserve_bytes, const std::string& advice = default_advice,
                             const std::string& subject = "dataset") {
    using detail::format_bytes;
    const std::size_t usable = detail::usable_bytes(free_bytes, reserve_bytes);
    return "resident: " + subject + " needs " + format_bytes(needed_bytes) + " on " + space_name +
           " but only " + format_bytes(usable) + " of " + format_bytes(total_bytes) +
           " is free after a " + format_bytes(reserve_bytes) + " reserve; " + advice + " (needed " +
           std::to_string(needed_bytes) + " B, free " + std::to_string(free_bytes) + " B, total " +
           std::to_string(total_bytes) + " B, reserve " + std::to_string(reserve_bytes) + " B)";
  }

 private:
  std::string space_name_;
  std::size_t needed_bytes_;
  std::size_t free_bytes_;
  std::size_t total_bytes_;
  std::size_t reserve_bytes_;
};

/// @brief A CUDA runtime call failed, or no usable CUDA device or driver is present. Keeps the
/// `cudaError_t` value (as an `int`, so this header needs no CUDA headers), the call and the
/// place, as CCCL's `cuda_error` does.
class CudaError : public Error {
 public:
  /// @param code the `cudaError_t` value
  /// @param call the failing call as written in the source
  /// @param file source file of the call
  /// @param line source line of the call
  /// @param message the complete sentence `what()` returns
  CudaError(int code, std::string call, std::string file, int line, const std::string& message)
      : Error(message), code_(code), call_(std::move(call)), file_(std::move(file)), line_(line) {}

  [[nodiscard]] int code() const noexcept { return code_; }                 ///< `cudaError_t`
  [[nodiscard]] const std::string& call() const noexcept { return call_; }  ///< failing call
  [[nodiscard]] const std::string& file() const noexcept { return file_; }  ///< source file
  [[nodiscard]] int line() const noexcept { return line_; }                 ///< source line

 private:
  int code_;
  std::string call_;
  std::string file_;
  int line_;
};

/// @brief A file is not what it must be (a malformed or unsupported `.npy`): names the file,
/// the byte offset where reading stopped, and the reason.
class FormatError : public Error {
 public:
  /// @param path the file, as the caller named it
  /// @param offset byte offset in the file where reading stopped
  /// @param reason what is wrong with the file, the end of the message
  FormatError(std::string path, std::size_t offset, const std::string& reason)
      : Error("resident: " + path + ": at byte " + std::to_string(offset) + ": " + reason),
        path_(std::move(path)),
        offset_(offset),
        reason_(reason) {}

  /// @brief The file, as the caller named it.
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  /// @brief Byte offset in the file where reading stopped.
  [[nodiscard]] std::size_t offset() const noexcept { return offset_; }
  /// @brief What is wrong with the file: the message without the path and offset.
  [[nodiscard]] const std::string& reason() const noexcept { return reason_; }

 private:
  std::string path_;
  std::size_t offset_;
  std::string reason_;
};

/// @brief The upload was cancelled: the progress callback returned `false`. Everything the
/// construction took has been released; the space is as it was. A stream whose deflated
/// members inflate in the background throws it too, from a batch whose rows its callback
/// stopped before they were inflated.
class Cancelled : public Error {
 public:
  /// @param bytes_done bytes done when the callback asked to stop
  /// @param bytes_total bytes the work would have done
  /// @param message the whole message: what was cancelled, and what to do
  Cancelled(std::size_t bytes_done, std::size_t bytes_total, const std::string& message)
      : Error(message), bytes_done_(bytes_done), bytes_total_(bytes_total) {}
  /// @param bytes_done bytes copied when the callback asked to stop
  /// @param bytes_total bytes the upload would have copied
  Cancelled(std::size_t bytes_done, std::size_t bytes_total)
      : Error("resident: upload cancelled by the progress callback after " +
              detail::format_bytes(bytes_done) + " of " + detail::format_bytes(bytes_total) +
              "; the allocation was released and nothing was kept (return true from "
              "DatasetOptions::on_progress to let an upload finish)"),
        bytes_done_(bytes_done),
        bytes_total_(bytes_total) {}

  /// @brief Bytes copied when the callback asked to stop.
  [[nodiscard]] std::size_t bytes_done() const noexcept { return bytes_done_; }
  /// @brief Bytes the upload would have copied.
  [[nodiscard]] std::size_t bytes_total() const noexcept { return bytes_total_; }

 private:
  std::size_t bytes_done_;
  std::size_t bytes_total_;
};

}  // namespace resident
