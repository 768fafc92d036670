// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The token examples' data: an llm.c shard written the way llm.c writes one.

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace examples {

/// Writes `tokens` to `path` as an llm.c shard: a header of 256 int32 (magic 20240520, version
/// 1: uint16 tokens, the token count), then the tokens, little-endian as llm.c writes them.
inline void write_llmc_shard(const std::string& path, const std::vector<std::uint16_t>& tokens) {
  std::vector<std::int32_t> header(256, 0);
  header[0] = 20240520;
  header[1] = 1;
  header[2] = static_cast<std::int32_t>(tokens.size());
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(header.data()), 1024);
  out.write(reinterpret_cast<const char*>(tokens.data()),
            static_cast<std::streamsize>(tokens.size() * sizeof(std::uint16_t)));
}

}  // namespace examples
