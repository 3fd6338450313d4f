"""A tiny C project in a real git repository, for the tests of lab.builds, lab.recipes
and their bisection: a Makefile whose `all` makes ./git (the program lab.builds
expects; it ignores the MAKE_OPTS variables builds.py passes), a hot loop in work.c
whose length is FACTOR (factor.h) times its argument.

Each commit gets a date of its own (author and committer, one second apart), unlike
lab.recipes' pinned dates: a cherry-pick then makes a new commit of an old tree.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from gitbin import find_git, hermetic_env

MAKEFILE = """\
CC = cc
CFLAGS = -O1
all: git
git: main.o work.o
\t$(CC) $(CFLAGS) -o $@ main.o work.o
main.o: main.c $(wildcard *.h)
\t$(CC) $(CFLAGS) -c -o $@ main.c
work.o: work.c work.h factor.h
\t$(CC) $(CFLAGS) -c -o $@ work.c
.PHONY: all
"""

MAIN_C = """\
#include <stdio.h>
#include <stdlib.h>
#include "banner.h"
#include "work.h"

int main(int argc, char **argv)
{
\tunsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
\tprintf("%s %lu\\n", BANNER, work(n));
\treturn 0;
}
"""

WORK_C = """\
#include "factor.h"
#include "work.h"

unsigned long work(unsigned long n)
{
\tvolatile unsigned long acc = 0;
\tfor (unsigned long i = 0; i < n * FACTOR; i++)
\t\tacc += i ^ (acc >> 3);
\treturn acc;
}
"""

FILES = {
    "Makefile": MAKEFILE,
    "main.c": MAIN_C,
    "work.c": WORK_C,
    "work.h": "unsigned long work(unsigned long n);\n",
    "factor.h": "#define FACTOR 1\n",
    "banner.h": '#define BANNER "c0"\n',
}


class Repo:
    """A repository at path; commit() writes files and commits them, each commit one
    second after the one before."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.clock = 1_600_000_000
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str) -> str:
        self.clock += 1
        date = f"{self.clock} +0000"
        env = {**hermetic_env(), "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
        return subprocess.run([find_git(), "-C", str(self.path), *args], env=env, check=True,
                              capture_output=True, text=True).stdout.strip()

    def commit(self, message: str, files: dict[str, str]) -> str:
        for name, text in files.items():
            (self.path / name).write_text(text)
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD")

    def append(self, message: str, name: str, line: str) -> str:
        old = (self.path / name).read_text() if (self.path / name).exists() else ""
        return self.commit(message, {name: old + line + "\n"})

    def rev(self, rev: str) -> str:
        return self.git("rev-parse", rev)


def project(path: Path, files: dict[str, str] | None = None) -> Repo:
    """The project's first commit, "c0" (files: more files, or others in place of FILES')."""
    repo = Repo(path)
    repo.commit("c0: the project", {**FILES, "main.txt": "", "side.txt": "", **(files or {})})
    return repo


def planted_history(path: Path) -> tuple[Repo, str]:
    """30 commits: c0, main's m1..m12; a side branch from m4, s1..s10, whose s6
    makes the hot loop do twice the work; the side branch merged; m13..m18 after it.
    (the repository, s6's commit id)."""
    repo = project(path)
    planted = ""
    for i in range(1, 13):
        if i % 4 == 0:
            repo.commit(f"m{i}: banner", {"banner.h": f'#define BANNER "m{i}"\n'})
        else:
            repo.append(f"m{i}: a note", "main.txt", f"m{i}")
        if i == 4:
            repo.git("branch", "side")
    repo.git("checkout", "-q", "side")
    for i in range(1, 11):
        if i == 6:
            planted = repo.commit("s6: the hot loop twice over", {"factor.h": "#define FACTOR 2\n"})
        else:
            repo.append(f"s{i}: a note", "side.txt", f"s{i}")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "-m", "merge side", "side")
    for i in range(13, 19):
        repo.append(f"m{i}: a note", "main.txt", f"m{i}")
    assert int(repo.git("rev-list", "--count", "HEAD")) == 30
    return repo, planted


# a git in front of git: the hot loop (unless asked for its --version: a no-op run
# must stay one), then the real git with the same arguments, its exit status returned
WRAPPER_C = """\
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "real.h"
#include "work.h"

int main(int argc, char **argv)
{
\tint status;
\tpid_t pid;

\tif (argc < 2 || strcmp(argv[1], "--version"))
\t\twork(200000);
\tpid = fork();
\tif (pid == 0) {
\t\targv[0] = REAL_GIT;
\t\texecv(REAL_GIT, argv);
\t\t_exit(127);
\t}
\tif (pid < 0 || waitpid(pid, &status, 0) < 0)
\t\treturn 128;
\treturn WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}
"""


def wrapper_history(path: Path, real_git: str) -> tuple[Repo, str]:
    """c0 and four commits of a ./git that runs the hot loop, then real_git; the third
    (w3) makes the loop four times longer. (the repository, w3's commit id)."""
    repo = project(path, {"main.c": WRAPPER_C,
                          "real.h": f"#define REAL_GIT {json.dumps(real_git)}\n"})
    repo.append("w1: a note", "main.txt", "w1")
    repo.append("w2: a note", "main.txt", "w2")
    planted = repo.commit("w3: the hot loop four times over", {"factor.h": "#define FACTOR 4\n"})
    repo.append("w4: a note", "main.txt", "w4")
    return repo, planted
