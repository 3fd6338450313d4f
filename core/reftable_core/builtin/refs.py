"""`reftable-lab refs migrate --ref-format=files|reftable [--dry-run]`: git 2.47's
`git refs migrate` (builtin/refs.c) over reftable_core.refs.migrate.

Contract: the same repository afterwards as git's own migration (refs, symrefs,
root refs, config; the old store removed), git's output and exit statuses:
"usage: missing --ref-format=<format>" / "usage: too many arguments" (129), an
option error with the usage (129), "error: unknown ref storage format 'X'",
"error: repository already uses 'X' format" and every migration failure as
"error: <git's text>" (status 255, git's -1), the dry run's "Finished dry-run
migration of refs, the result can be found at '<dir>'" on stdout. The migration
directory is named after the git dir as git names it: as given (--git-dir,
$GIT_DIR), else "." for a bare repository and ".git" otherwise (git has moved to
the top of the worktree or into the git dir by then). The initial transaction's
refname check follows the flag initial_transaction_check. `refs verify` is
not modelled (a fatal error says so). Also takes --git-dir DIR, --flags SPEC
and --baseline.
"""
from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

from reftable_core.errors import MigrationError
from reftable_core.flags import Flags
from reftable_core.refs.migrate import FORMATS, MigrateOptions, migrate_ref_storage
from reftable_core.refs.transaction import hooks_dir

from .gitlike import Die, add_git_command, open_git_repo, shown_gitdir, write_err
from .parseopt import OptSpec, parse_git_options, split_lab_options

USAGE_MIGRATE_LINE = "git refs migrate --ref-format=<format> [--dry-run]"
USAGE_VERIFY_LINE = "git refs verify [--strict] [--verbose]"
USAGE_REFS = f"usage: {USAGE_MIGRATE_LINE}\n   or: {USAGE_VERIFY_LINE}\n\n"
USAGE_MIGRATE = (f"usage: {USAGE_MIGRATE_LINE}\n\n"
                 "    --ref-format <format> specify the reference format to convert to\n"
                 "    --[no-]dry-run        perform a non-destructive dry-run\n\n")
MIGRATE_SPECS = [
    OptSpec("ref-format", None, "string", "ref_format", negatable=False),
    OptSpec("dry-run", None, "bool", "dry_run"),
]
ERROR_STATUS = 255                   # git's cmd_refs_migrate returns error()'s -1


def register(sub: argparse._SubParsersAction, add_flag_options: Callable) -> None:
    add_git_command(sub, *GIT_COMMAND)


def refs(argv: list[str], flags: Flags, out: Any) -> int:
    """git refs <subcommand>: parse_options with OPT_SUBCOMMAND."""
    argv, gitdir, flags = split_lab_options(argv, flags)
    if not argv:
        raise Die(f"error: need a subcommand\n{USAGE_REFS}", 129, "usage")
    if argv[0] in ("-h", "--help"):
        out.write(USAGE_REFS.encode())
        return 129
    if argv[0] == "migrate":
        return migrate(argv[1:], gitdir, flags, out)
    if argv[0] == "verify":
        raise Die("reftable-lab does not model 'git refs verify'")
    if argv[0].startswith("-"):
        raise Die(f"error: unknown option `{argv[0].lstrip('-')}'\n{USAGE_REFS}", 129, "usage")
    raise Die(f"error: unknown subcommand: `{argv[0]}'\n{USAGE_REFS}", 129, "usage")


def migrate(argv: list[str], gitdir: str | None, flags: Flags, out: Any) -> int:
    """cmd_refs_migrate."""
    repo = open_git_repo(gitdir, flags)
    try:
        o: dict[str, Any] = {"ref_format": None, "dry_run": False}

        def handle(spec: OptSpec, val: str | None, negated: bool) -> None:
            o[spec.dest] = (not negated) if spec.kind == "bool" else val

        rest = parse_git_options(argv, MIGRATE_SPECS, handle, USAGE_MIGRATE, out)
        if rest:
            raise Die("too many arguments", 129, "usage: ")
        fmt = o["ref_format"]
        if fmt is None:
            raise Die("missing --ref-format=<format>", 129, "usage: ")
        if fmt not in FORMATS:
            write_err("error: ", f"unknown ref storage format '{fmt}'")
            return ERROR_STATUS
        if repo.ref_storage == fmt:
            write_err("error: ", f"repository already uses '{fmt}' format")
            return ERROR_STATUS
        display = shown_gitdir(gitdir if gitdir is not None else os.environ.get("GIT_DIR"),
                               repo.commondir, repo.is_bare)
        options = MigrateOptions(
            flags=flags, object_format=repo.object_format, config=repo.config,
            objects=lambda: repo.objects, hooks=hooks_dir(repo.commondir, repo.config),
            dry_run=o["dry_run"], display_dir=display)
        try:
            done = migrate_ref_storage(repo.commondir, repo.refs, repo.ref_storage, fmt, options)
        except MigrationError as e:
            write_err("error: ", str(e))
            return ERROR_STATUS
        for warning in done.warnings:
            write_err("warning: ", warning)
        if o["dry_run"]:
            out.write(b"Finished dry-run migration of refs, the result can be found at '%s'\n"
                      % os.fsencode(done.shown))
        return 0
    finally:
        repo.close()


# the command, as lab.cli runs it (without argparse) and register() registers it
GIT_COMMAND = ("refs", "migrate the ref storage format like git refs migrate", refs)
