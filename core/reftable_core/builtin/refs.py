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
refname check follows the flag initial_transaction_check.

`refs verify [--strict] [--verbose]`: git 2.47's (builtin/refs.c cmd_refs_verify,
files_fsck_refs): a files store's every file under refs/, walked as git's dir_iterator
walks (directory order, each directory before its contents), its name checked
(check_refname_format of the file name, a ".lock" file skipped unless its name starts
with "."; badRefName "invalid refname format"), a file of another type reported by its
name (badRefFiletype "unexpected file type"); --verbose names each file ("Checking
refs/..."), after "Checking references consistency". A report is "error: <path>: <id>:
<text>" (status 255) or, under fsck.<id>=warn, a warning; fsck.<id>=ignore drops it,
an unknown id or severity dies as git does. A reftable store has nothing to check (git
2.47's reftable_be_fsck). Also takes --git-dir DIR, --flags SPEC and --baseline.
"""
from __future__ import annotations

import argparse
import os
import stat
from collections.abc import Callable
from typing import Any

from reftable_core.errors import MigrationError
from reftable_core.flags import Flags
from reftable_core.refs.migrate import FORMATS, MigrateOptions, migrate_ref_storage
from reftable_core.refs.refname import REFNAME_ALLOW_ONELEVEL, check_refname_format
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
USAGE_VERIFY = (f"usage: {USAGE_VERIFY_LINE}\n\n"
                "    --[no-]verbose        be verbose\n"
                "    --[no-]strict         enable strict checking\n\n")
VERIFY_SPECS = [
    OptSpec("verbose", None, "bool", "verbose"),
    OptSpec("strict", None, "bool", "strict"),
]
ERROR_STATUS = 255                   # git's cmd_refs_migrate returns error()'s -1

# fsck.h's FOREACH_FSCK_MSG_ID (git 2.47): every message id and its default severity
# (fsck.<id> in the config must name one of them)
FSCK_MSG_IDS = (
    "NUL_IN_HEADER FATAL, UNTERMINATED_HEADER FATAL, BAD_DATE ERROR, BAD_DATE_OVERFLOW "
    "ERROR, BAD_EMAIL ERROR, BAD_NAME ERROR, BAD_OBJECT_SHA1 ERROR, BAD_PARENT_SHA1 ERROR, "
    "BAD_REF_FILETYPE ERROR, BAD_REF_NAME ERROR, BAD_TIMEZONE ERROR, BAD_TREE ERROR, "
    "BAD_TREE_SHA1 ERROR, BAD_TYPE ERROR, DUPLICATE_ENTRIES ERROR, MISSING_AUTHOR ERROR, "
    "MISSING_COMMITTER ERROR, MISSING_EMAIL ERROR, MISSING_NAME_BEFORE_EMAIL ERROR, "
    "MISSING_OBJECT ERROR, MISSING_SPACE_BEFORE_DATE ERROR, MISSING_SPACE_BEFORE_EMAIL "
    "ERROR, MISSING_TAG ERROR, MISSING_TAG_ENTRY ERROR, MISSING_TREE ERROR, MISSING_TYPE "
    "ERROR, MISSING_TYPE_ENTRY ERROR, MULTIPLE_AUTHORS ERROR, TREE_NOT_SORTED ERROR, "
    "UNKNOWN_TYPE ERROR, ZERO_PADDED_DATE ERROR, GITMODULES_MISSING ERROR, GITMODULES_BLOB "
    "ERROR, GITMODULES_LARGE ERROR, GITMODULES_NAME ERROR, GITMODULES_SYMLINK ERROR, "
    "GITMODULES_URL ERROR, GITMODULES_PATH ERROR, GITMODULES_UPDATE ERROR, "
    "GITATTRIBUTES_MISSING ERROR, GITATTRIBUTES_LARGE ERROR, GITATTRIBUTES_LINE_LENGTH "
    "ERROR, GITATTRIBUTES_BLOB ERROR, EMPTY_NAME WARN, FULL_PATHNAME WARN, HAS_DOT WARN, "
    "HAS_DOTDOT WARN, HAS_DOTGIT WARN, NULL_SHA1 WARN, ZERO_PADDED_FILEMODE WARN, "
    "NUL_IN_COMMIT WARN, LARGE_PATHNAME WARN, BAD_FILEMODE INFO, GITMODULES_PARSE INFO, "
    "GITIGNORE_SYMLINK INFO, GITATTRIBUTES_SYMLINK INFO, MAILMAP_SYMLINK INFO, "
    "BAD_TAG_NAME INFO, MISSING_TAGGER_ENTRY INFO, EXTRA_HEADER_ENTRY IGNORE")
_DEFAULT_SEVERITY = {k.replace("_", "").lower(): v for k, v in
                     (item.split() for item in FSCK_MSG_IDS.split(", "))}


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
        return verify(argv[1:], gitdir, flags, out)
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


def _camel(msg_id: str) -> str:
    """fsck.c prepare_msg_ids' camelcased form: BAD_REF_NAME -> badRefName."""
    head, *rest = msg_id.lower().split("_")
    return head + "".join(w.capitalize() for w in rest)


def _severities(config: dict[str, str], strict: bool) -> dict[str, str]:
    """The severity of each id after git_fsck_config's fsck.<id> entries (FSCK_INFO is
    shown as a warning, FSCK_FATAL as an error, as fsck_vreport does)."""
    sev = {k: ("ERROR" if strict and v == "WARN" else v) for k, v in _DEFAULT_SEVERITY.items()}
    for key, value in config.items():
        if not key.startswith("fsck.") or key == "fsck.skiplist":
            continue
        msg_id = key[len("fsck."):]
        if msg_id not in sev:
            raise Die(f"Unhandled message id: {msg_id}")
        kind = {"error": "ERROR", "warn": "WARN", "ignore": "IGNORE"}.get(value or "")
        if kind is None:
            raise Die(f"Unknown fsck message type: '{value}'")
        if kind != "ERROR" and _DEFAULT_SEVERITY[msg_id] == "FATAL":
            raise Die(f"Cannot demote {msg_id} to {value}")
        sev[msg_id] = kind
    return sev


def verify(argv: list[str], gitdir: str | None, flags: Flags, out: Any) -> int:
    """cmd_refs_verify: files_fsck_refs over refs/ (see the module contract)."""
    o: dict[str, Any] = {"verbose": False, "strict": False}

    def handle(spec: OptSpec, val: str | None, negated: bool) -> None:
        o[spec.dest] = not negated

    rest = parse_git_options(argv, VERIFY_SPECS, handle, USAGE_VERIFY, out)
    if rest:
        raise Die("'git refs verify' takes no arguments", 129, "usage: ")
    repo = open_git_repo(gitdir, flags)
    try:
        sev = _severities(repo.config, o["strict"])
        if repo.ref_storage != "files":
            return 0                        # git 2.47's reftable_be_fsck checks nothing
        if o["verbose"]:
            write_err("", "Checking references consistency")
        failed = False

        def report(path: str, msg_id: str, text: str) -> None:
            nonlocal failed
            kind = sev[msg_id.replace("_", "").lower()]
            if kind == "IGNORE":
                return
            line = f"{path}: {_camel(msg_id)}: {text}"
            if kind in ("WARN", "INFO"):
                write_err("warning: ", line)
            else:
                write_err("error: ", line)
                failed = True

        def walk(directory: str, rel: str) -> None:
            with os.scandir(directory) as entries:          # readdir's order, as git's
                for e in entries:
                    mode = e.stat(follow_symlinks=False).st_mode
                    path = f"{rel}/{e.name}"
                    if stat.S_ISDIR(mode):
                        walk(e.path, path)
                    elif stat.S_ISREG(mode) or stat.S_ISLNK(mode):
                        if o["verbose"]:
                            write_err("", f"Checking {path}")
                        if e.name[0] != "." and e.name.endswith(".lock"):
                            continue
                        name = os.fsencode(e.name)
                        if not check_refname_format(name, REFNAME_ALLOW_ONELEVEL):
                            report(path, "BAD_REF_NAME", "invalid refname format")
                    else:
                        report(e.name, "BAD_REF_FILETYPE", "unexpected file type")

        top = os.path.join(repo.commondir, "refs")
        try:
            walk(top, "refs")
        except OSError as e:
            write_err("error: ", f"cannot open directory {top}: {e.strerror}")
            return ERROR_STATUS
        return ERROR_STATUS if failed else 0
    finally:
        repo.close()


# the command, as lab.cli runs it (without argparse) and register() registers it
GIT_COMMAND = ("refs", "migrate the ref storage format like git refs migrate", refs)
