#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
"""Fails when the moved-from test's list of (class, member) cases and the public headers
disagree.

Reads the public member functions of the library's classes from clang's AST of the public
headers (CUDA's included where the toolkit's headers are found): those a class declares public,
those of its public bases (DatasetAccessors, BasicDataset, detail::HostMemorySpace, ...) and
its hidden friends (operator==, swap); constructors, destructors, static and deleted members
aside. Then compares them with the cases file (tests/adversarial/moved_from_members.txt):

  resident::npz::Archive  check_unchanged            a member the test calls on a moved-from
  resident::Epoch  impl_lease  -- <reason>           a member listed but not called, and why
  resident::Shape  n/a  -- <reason>                  a class that needs no moved-from case
  resident::TensorBatch  release  @torch             a member tests/torch/test_torch.cpp calls

Fails (exit status 1), saying which, when a public member of a listed class has no line, a
line names no member of its class, or a public class of namespace `resident` (not `detail`)
that has member functions is neither listed with cases nor `n/a`. Classes outside that
namespace (an epoch's iterator, detail::BatchIterator) are checked when the file lists them.

torch.hpp needs libtorch's headers: it is parsed when --include names their directories (CMake's
TORCH_INCLUDE_DIRS); without them its classes, those whose lines are all `@torch`, are not
checked, and say so.

Usage: scripts/public-members.py [--clang CLANG] [--cases FILE] [--include DIR]... [--list]
  --include DIR  one of libtorch's include directories (repeatable): check torch.hpp too
  --list         prints every class found with its public members, and checks nothing
Exit status 77 when clang cannot be run (a skip for ctest).
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = os.path.join(ROOT, "tests", "adversarial", "moved_from_members.txt")
# The header that needs libtorch's: parsed apart, given --include.
TORCH_HEADER = "torch.hpp"
# The mark of a line whose member tests/torch/test_torch.cpp calls (it alone links libtorch).
TORCH_MARK = "@torch"
# What torch.hpp declares needs libtorch's tensor types, not its whole C++ frontend (nn, optim,
# data), which takes clang twice as long: this stands in for <torch/torch.h> first.
TORCH_UMBRELLA = "#include <torch/types.h>\n#include <torch/cuda.h>\n"
RECORD_KINDS = ("CXXRecordDecl", "ClassTemplateDecl", "ClassTemplatePartialSpecializationDecl")


def cuda_include():
    for candidate in [os.environ.get("CUDA_HOME", ""), "/usr/local/cuda", "/usr"]:
        if candidate and os.path.exists(os.path.join(candidate, "include", "cuda_runtime_api.h")):
            return os.path.join(candidate, "include")
    return None


def clang_command(clang, source, flags):
    """The command that dumps the AST (JSON) of `source`'s declarations in `resident::`."""
    return [clang, "-std=c++17", "-I" + os.path.join(ROOT, "include")] + flags + [
        "-fsyntax-only", "-Wno-everything", source, "-Xclang", "-ast-dump=json", "-Xclang",
        "-ast-dump-filter=resident::"]


def chunks_of(text):
    """One document per declaration of the dump."""
    starts = [m.start() for m in re.finditer(r"^\{$", text, re.M)] + [len(text)]
    return [text[a:b] for a, b in zip(starts, starts[1:])]


def run_together(commands, scratch):
    """[(command, stdout, stderr, exit status)] of `commands`, run at the same time (into
    files: a pipe left unread would hold one back until the other is done)."""
    runs = []
    for at, command in enumerate(commands):
        out = open(os.path.join(scratch, f"{at}.out"), "w+", encoding="utf-8")
        err = open(os.path.join(scratch, f"{at}.err"), "w+", encoding="utf-8")
        runs.append((command, out, err, subprocess.Popen(command, stdout=out, stderr=err)))
    done = []
    for command, out, err, run in runs:
        status = run.wait()
        with out, err:
            out.seek(0)
            err.seek(0)
            done.append((command, out.read(), err.read(), status))
    return done


def dump(clang, torch_includes):
    """The AST (JSON) of every public header, one document per declaration in `resident::`;
    torch.hpp's too (in a second translation unit, parsed at the same time) given libtorch's
    include directories."""
    headers = sorted(os.path.basename(h) for h in glob.glob(os.path.join(ROOT, "include",
                                                                          "resident", "*.hpp")))
    cuda = cuda_include()
    flags = ["-DRESIDENT_HAS_CUDA=1", "-I" + cuda] if cuda else ["-DRESIDENT_HAS_CUDA=0"]
    # After the system's directories: libtorch's may be /usr/include, which as -isystem would
    # come before libstdc++'s and break its #include_next.
    torch_flags = [f for d in torch_includes for f in ("-idirafter", d)]
    with tempfile.TemporaryDirectory() as scratch:
        main = os.path.join(scratch, "headers.cpp")
        with open(main, "w", encoding="utf-8") as f:
            f.write("".join(f"#include <resident/{h}>\n" for h in headers if h != TORCH_HEADER))
        torch = os.path.join(scratch, "torch.cpp")
        with open(torch, "w", encoding="utf-8") as f:
            f.write(f"#include <resident/{TORCH_HEADER}>\n")
        umbrella = os.path.join(scratch, "umbrella")
        os.makedirs(os.path.join(umbrella, "torch"))
        with open(os.path.join(umbrella, "torch", "torch.h"), "w", encoding="utf-8") as f:
            f.write(TORCH_UMBRELLA)
        commands = [clang_command(clang, main, flags)]
        if torch_includes:
            commands.append(clang_command(clang, torch, flags + ["-I" + umbrella] + torch_flags))
        done = run_together(commands, scratch)
        if len(done) == 2 and done[1][3] != 0:
            # torch.hpp needs more of libtorch than the stand-in has: its own umbrella, then.
            done[1:] = run_together([clang_command(clang, torch, flags + torch_flags)], scratch)
    chunks = []
    for at, (args, out, err, status) in enumerate(done):
        if status != 0:
            sys.exit(f"public-members: {clang} could not parse the headers ({' '.join(args)}):"
                     f"\n{err[-4000:]}")
        # Of torch.hpp's unit, its own declarations: the other headers' are the first unit's.
        chunks += [c for c in chunks_of(out) if at == 0 or "/" + TORCH_HEADER + '"' in c]
    return chunks, cuda is not None


class Ast:
    """The records of the dump, parsed on demand (the detail namespaces are most of it)."""

    def __init__(self, chunks):
        self.chunks = chunks
        self.records = {}  # qualified name -> [record nodes]
        self.parsed = set()
        for at, chunk in enumerate(chunks):
            name = re.search(r'^  "name": "([^"]*)"', chunk, re.M)
            if not (name and name.group(1) == "detail"):
                self.parse(at)

    def parse(self, at):
        if at in self.parsed:
            return
        self.parsed.add(at)
        self.walk(json.loads(self.chunks[at]), "resident")

    def walk(self, node, scope):
        kind = node.get("kind")
        if kind == "NamespaceDecl":
            for child in node.get("inner", []):
                self.walk(child, scope + "::" + node["name"])
        elif kind in RECORD_KINDS:
            record = node
            if kind == "ClassTemplateDecl":
                record = next((c for c in node.get("inner", []) if c["kind"] == "CXXRecordDecl"),
                              None)
            if record and record.get("completeDefinition") and not record.get("isImplicit"):
                self.records.setdefault(scope + "::" + record["name"], []).append(record)

    def find(self, name):
        """The records named `name` (unqualified, or qualified below `resident::`)."""
        short = name.split("::")[-1]
        for at, chunk in enumerate(self.chunks):
            if at not in self.parsed and f'"name": "{short}"' in chunk:
                self.parse(at)
        return [r for q, rs in self.records.items() for r in rs
                if q == name or q.endswith("::" + name) or (q.split("::")[-1] == short and
                                                            "::" not in name)]


def base_name(qual_type):
    """The template named by a base's type: `detail::HostMemorySpace<HostStream>` gives
    detail::HostMemorySpace; `detail::accessors_of<...>::type` gives (detail::accessors_of,
    type)."""
    depth, out = 0, ""
    for ch in qual_type:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif depth == 0:
            out += ch
    out = out.replace("struct ", "").replace("class ", "").replace("typename ", "").strip()
    parts = out.split("::")
    if len(parts) > 1 and parts[-1] == "type":
        return "::".join(parts[:-1]), "type"
    return out, None


def public_members(ast, record, seen=None):
    """{member name: where it is declared} of `record`, its public bases' included."""
    seen = seen if seen is not None else set()
    if id(record) in seen:
        return {}
    seen.add(id(record))
    access = "public" if record.get("tagUsed") in ("struct", "union") else "private"
    members = {}
    for child in record.get("inner", []):
        kind = child["kind"]
        if kind == "AccessSpecDecl":
            access = child["access"]
            continue
        if kind == "FriendDecl":
            for friend in child.get("inner", []):
                if friend["kind"] in ("FunctionDecl", "FunctionTemplateDecl"):
                    members[friend["name"]] = record["name"] + " (friend)"
            continue
        if access != "public" or child.get("isImplicit"):
            continue
        if kind == "FunctionTemplateDecl":
            inner = next((c for c in child.get("inner", []) if c["kind"] in
                          ("CXXMethodDecl", "CXXConversionDecl")), None)
            if inner is None:
                continue  # a constructor template
            child = inner
            kind = inner["kind"]
        if kind not in ("CXXMethodDecl", "CXXConversionDecl"):
            continue  # constructors, destructors, types, data
        if child.get("storageClass") == "static" or child.get("explicitlyDeleted"):
            continue
        members[child["name"]] = record["name"]
    for base in record.get("bases", []):
        if base.get("access") != "public":
            continue
        name, member_type = base_name(base["type"]["qualType"])
        for found in ast.find(name):
            if member_type is None:
                members.update({k: v for k, v in public_members(ast, found, seen).items()
                                if k not in members})
                continue
            # A base chosen by a trait (accessors_of<...>::type): the alias each of the
            # trait's specialisations declares.
            for alias in found.get("inner", []):
                if alias["kind"] in ("TypeAliasDecl", "TypedefDecl") and alias["name"] == "type":
                    target, _ = base_name(alias["type"]["qualType"])
                    for resolved in ast.find(target):
                        members.update({k: v for k, v in public_members(ast, resolved,
                                                                        seen).items()
                                        if k not in members})
    return members


def read_cases(path):
    """{class: {member: reason or None}}, {class: reason} of the n/a classes, line numbers, and
    the classes whose lines are all `@torch`."""
    cases, not_applicable, lines, marks = {}, {}, {}, {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            head, _, reason = line.partition("--")
            words = head.split()
            marked = len(words) == 3 and words[2] == TORCH_MARK and "--" not in line
            if not (len(words) == 2 or marked) or ("--" in line and not reason.strip()):
                sys.exit(f"{path}:{number}: expected 'CLASS MEMBER [-- REASON | {TORCH_MARK}]',"
                         f" got: {line}")
            owner, member = words[:2]
            marks.setdefault(owner, set()).add(marked)
            reason = reason.strip() or None
            if member == "n/a":
                if not reason:
                    sys.exit(f"{path}:{number}: an n/a class needs its reason after --")
                not_applicable[owner] = reason
                continue
            if member in cases.setdefault(owner, {}):
                sys.exit(f"{path}:{number}: {owner} {member} is listed twice")
            cases[owner][member] = reason
            lines[(owner, member)] = number
    torch_only = {owner for owner, marked in marks.items() if marked == {True}}
    return cases, not_applicable, lines, torch_only


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clang", default=os.environ.get("CXX_CLANG", "clang++"))
    parser.add_argument("--cases", default=CASES)
    parser.add_argument("--include", action="append", default=[], metavar="DIR")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    if shutil.which(args.clang) is None:
        print(f"public-members: SKIP: {args.clang} was not found; install clang to check the "
              "moved-from cases against the headers")
        return 77
    chunks, has_cuda = dump(args.clang, args.include)
    ast = Ast(chunks)
    classes = {}
    for name, records in sorted(ast.records.items()):
        if "::detail::" in name:
            continue
        members = {}
        for record in records:
            members.update(public_members(ast, record))
        if members:
            classes[name] = members
    if args.list:
        for name, members in classes.items():
            print(name + ": " + " ".join(sorted(members)))
        return 0

    cases, not_applicable, lines, torch_only = read_cases(args.cases)
    problems = []
    cuda_only = {"resident::CudaSpace", "resident::CudaHostPinnedSpace", "resident::CudaPoolResource",
                 "resident::CudaMallocResource"}
    for owner in sorted(set(cases) | set(not_applicable)):
        if owner in classes:
            continue
        records = [r for r in ast.find(owner) if owner.endswith(r["name"])]
        if records:
            members = {}
            for record in records:
                members.update(public_members(ast, record))
            classes[owner] = members
        elif owner in cuda_only and not has_cuda:
            print(f"public-members: {owner} not checked: no CUDA headers were found")
        elif owner in torch_only and not args.include:
            print(f"public-members: {owner} not checked: libtorch's include directories were "
                  "not given (--include)")
        else:
            problems.append(f"{owner}: listed, but no such class is in the public headers")
    for owner, members in sorted(classes.items()):
        if owner in not_applicable:
            if owner in cases:
                problems.append(f"{owner}: both n/a and listed with cases")
            continue
        if owner not in cases:
            if "::detail::" not in owner:
                problems.append(f"{owner}: a public class with member functions ("
                                f"{', '.join(sorted(members))}) that is neither covered nor n/a;"
                                f" add its members to {os.path.relpath(args.cases, ROOT)} and "
                                "a case for each to tests/adversarial/test_moved_from.cpp, or "
                                "list it as `n/a -- <why>`")
            continue
        where = ("marked @torch, and call it in tests/torch/test_torch.cpp" if owner in torch_only
                 else "and call it in tests/adversarial/test_moved_from.cpp")
        for member in sorted(set(members) - set(cases[owner])):
            problems.append(f"{owner}::{member} (declared in {members[member]}) has no "
                            f"moved-from case; add it to {os.path.relpath(args.cases, ROOT)} "
                            + where)
        for member in sorted(set(cases[owner]) - set(members)):
            problems.append(f"{os.path.relpath(args.cases, ROOT)}:{lines[(owner, member)]}: "
                            f"{owner} has no public member '{member}'")
    for problem in problems:
        print("public-members: " + problem)
    covered = sum(len(m) for m in cases.values())
    print(f"public-members: {len(cases)} classes with {covered} members listed, "
          f"{len(not_applicable)} n/a; {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
