// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Test support: runs a check as a user whom file permissions bind. Permissions do not bind
// root, and CI runs as root, so a test of "permission denied" that only skipped there would
// never run at all.

#include <grp.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace resident::testing {

/// The user and group `nobody` on Linux.
inline constexpr ::uid_t unprivileged_id = 65534;

/// Runs `check` (which uses gtest's EXPECT_* macros) as a user whom permissions bind: in this
/// process when it is not root; as root, in a forked child that first drops to `nobody`. The
/// child's failures are printed by the child and reported here through its exit status. Paths
/// the check opens must be reachable by `nobody` (gtest's TempDir, /tmp, is).
template <class Check>
void as_unprivileged(Check check) {
  if (::geteuid() != 0) {
    check();
    return;
  }
  std::fflush(nullptr);  // nothing buffered before the fork is printed twice
  const ::pid_t child = ::fork();
  ASSERT_GE(child, 0) << "fork: " << std::strerror(errno);
  if (child == 0) {
    int code = 2;  // could not drop privileges
    if (::setgroups(0, nullptr) == 0 && ::setgid(unprivileged_id) == 0 &&
        ::setuid(unprivileged_id) == 0) {
      check();
      code = ::testing::Test::HasFailure() ? 1 : 0;
    } else {
      std::printf("as_unprivileged: cannot drop to uid %u: %s\n", unprivileged_id,
                  std::strerror(errno));
    }
    std::fflush(nullptr);
    ::_exit(code);  // no atexit handlers, no gtest teardown in the child
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child) << "waitpid: " << std::strerror(errno);
  ASSERT_TRUE(WIFEXITED(status)) << "the unprivileged child ended abnormally (status " << status
                                 << ")";
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << (WEXITSTATUS(status) == 2 ? "the child could not drop its privileges (above)"
                                   : "the checks above failed in the unprivileged child");
}

}  // namespace resident::testing
