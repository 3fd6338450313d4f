"""reftable-lab command line: a dict registry of subcommands.

COMMANDS maps each command name to the module that serves it (lab.commands: the
lab's own drivers; reftable_core.builtin: the git-like commands). Such a module
defines `register(sub, add_flag_options) -> None`, adding its subparser(s) with `set_defaults(func=handler)`; a handler takes
(args: argparse.Namespace, flags: Flags) and returns the exit status. Running
one known command imports only its module (start-up time is part of what
`reftable-lab show-ref` is measured on); otherwise (help, unknown names) every
module registers, in COMMANDS order. A git-like command (a module whose GIT_COMMAND
is (name, help, function), registered by gitlike.add_git_command) runs without
argparse: it parses its own arguments as git does, and building the parser (an
argparse add_argument instantiates a HelpFormatter, which imports shutil) is most of
what such a command would spend before its work. Every command takes --flags SPEC and
--baseline (and $REFTABLE_LAB_FLAGS). git's global options before the command
name (-C DIR, -c name=value, --git-dir, ...) are applied as git applies them
(reftable_core.builtin.gitlike.apply_global_options), so `reftable-lab -C repo show-ref`
stands in for `git -C repo show-ref`.
"""
from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
from collections.abc import Callable, Sequence

from reftable_core.errors import ReftableError
from reftable_core.flags import resolve

from reftable_core.builtin.gitlike import Die, apply_global_options, report_die, run_git_command

COMMANDS: dict[str, str] = {
    "flags": "lab.commands.flags",
    "dump": "lab.commands.dump",
    "show-ref": "reftable_core.builtin.show_ref",
    "for-each-ref": "reftable_core.builtin.for_each_ref",
    "update-ref": "reftable_core.builtin.update_ref",
    "refs": "reftable_core.builtin.refs",
    "odb": "reftable_core.builtin.odb",
    "gen": "lab.commands.gen",
    "bench": "lab.commands.bench",
    "compare": "lab.commands.bench",
    "report": "lab.commands.bench",
    "profile": "lab.commands.bench",
    "history": "lab.commands.history",
    "speed": "lab.commands.speed",
    "bisect": "lab.commands.bisect",
}


def add_flag_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--flags", metavar="SPEC", default=None,
                   help='optimization flags, e.g. "mmap=off,pq_cmp=on" (see `reftable-lab flags`)')
    p.add_argument("--baseline", action="store_true",
                   help="start from every optimization off (git before the patches)")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; with command given (a known name), only that command's module is loaded."""
    parser = argparse.ArgumentParser(prog="reftable-lab",
                                     description="A performance lab for git's ref and object storage")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    modules = [COMMANDS[command]] if command in COMMANDS else list(dict.fromkeys(COMMANDS.values()))
    for name in modules:
        importlib.import_module(name).register(sub, add_flag_options)
    return parser


def die_of_sigpipe() -> None:
    """As git's check_pipe: stdout's reader gone, the program ends by SIGPIPE, silently
    (Python ignores the signal, so a write raised BrokenPipeError; the lab printed
    "fatal: Broken pipe"). Writes to a hook's or a child's pipe are not affected: their
    EPIPE is handled where they are written, as git ignores SIGPIPE there."""
    sys.stderr.flush()
    try:
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGPIPE)
    except (AttributeError, ValueError, OSError):   # no SIGPIPE here, or not the main thread
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """The program (argv None: the command line) or one command run in this process
    (a closed stdout: status 141, the process lives on)."""
    program = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        argv = apply_global_options(argv)
    except Die as d:
        return report_die(d)
    git_command = None
    if argv and argv[0] in COMMANDS:
        git_command = getattr(importlib.import_module(COMMANDS[argv[0]]), "GIT_COMMAND", None)
    if git_command is not None and git_command[0] == argv[0]:
        command, rest = git_command[2], argv[1:]
        run: Callable[[], int | None] = lambda: run_git_command(command, rest, resolve(None, False))
    else:
        args = build_parser(argv[0] if argv else None).parse_args(argv)
        run = lambda: args.func(
            args, resolve(getattr(args, "flags", None), getattr(args, "baseline", False)))
    try:
        return int(run() or 0)
    except ReftableError as e:
        print(f"fatal: {e}", file=sys.stderr)
        return 128
    except BrokenPipeError:
        if program:
            die_of_sigpipe()
        return 141


if __name__ == "__main__":
    sys.exit(main())
