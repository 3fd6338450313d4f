"""A small git-style option parser for the commands that mimic git.

Contract:
  parse_git_options(argv, specs, handle) -> the non-option arguments
      git's parse-options rules: unique long-option prefixes, --no-X (unless the
      spec is not negatable), bundled short options, "--" ends the options; an
      "optarg" option takes only an attached value (-s8, --abbrev=8), a "string"
      option the attached or the next argument, a "lastarg" option (git's
      PARSE_OPT_LASTARG_DEFAULT) the attached or the next argument unless there is
      none (then the value is None: the caller's default). handle(spec, value, negated) is
      called per option, in order. Errors raise Die(..., 129) with git's wording.
      With usage (the command's usage text; usage_all adds the hidden options)
      git's internal help too: a lone "-h", "--help" (and an unknown short "h")
      write usage to out and exit 129, "--help-all" writes usage_all; an unknown
      option prints its error line and usage to stderr, an ambiguous one its
      error line to stderr and usage to out (git 2.47's parse-options).
  split_lab_options(argv, flags) -> (argv, gitdir, flags)
      takes the lab's own --git-dir, --flags SPEC and --baseline out of argv
      (before "--"), so the rest can be parsed exactly as git would.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from reftable_core.flags import Flags, resolve

from .gitlike import Die, write_err

OptKind = Literal["bool", "optarg", "string", "lastarg"]


class OptSpec:
    def __init__(self, long: str | None, short: str | None, kind: OptKind, dest: str,
                 negatable: bool = True) -> None:
        self.long = long
        self.short = short
        self.kind = kind
        self.dest = dest
        self.negatable = negatable


def _usage_exit(out: Any, text: str, err: str = "") -> Die:
    """git's show_usage: the usage text on stdout (err, if any, on stderr), status 129."""
    if err:
        write_err("error: ", err)
    out.write(text.encode())
    return Die("", 129, "usage")


def parse_git_options(argv: list[str], specs: list[OptSpec],
                      handle: Callable[[OptSpec, str | None, bool], None],
                      usage: str | None = None, out: Any = None,
                      usage_all: str | None = None) -> list[str]:
    """Parse argv git-style; call handle(spec, value, negated); return the non-options."""
    args: list[str] = []
    longs = {s.long: s for s in specs if s.long}
    shorts = {s.short: s for s in specs if s.short}

    def unknown(msg: str) -> Die:
        if usage is None:
            return Die(msg, 129, "error: ")
        return Die(f"error: {msg}\n{usage}", 129, "usage")

    if usage is not None and argv == ["-h"]:
        raise _usage_exit(out, usage)
    i = 0
    while i < len(argv):
        a = argv[i]
        i += 1
        if a == "--":
            args.extend(argv[i:])
            break
        if a.startswith("--"):
            if usage is not None and a in ("--help", "--help-all"):
                raise _usage_exit(out, (usage_all or usage) if a == "--help-all" else usage)
            body, eq, val = a[2:].partition("=")
            negated = False
            cands = [s for n, s in longs.items() if n == body]
            if not cands:
                cands = [s for n, s in longs.items() if n.startswith(body)]
            if not cands and body.startswith("no-"):
                b2 = body[3:]
                cands = [s for n, s in longs.items() if n == b2] or \
                        [s for n, s in longs.items() if n.startswith(b2)]
                negated = True
            if len(cands) != 1:
                if len(cands) > 1:
                    msg = (f"ambiguous option: {body} (could be --{cands[0].long} or "
                           f"--{cands[1].long})")
                    if usage is None:
                        raise Die(msg, 129, "error: ")
                    raise _usage_exit(out, usage, msg)
                raise unknown(f"unknown option `{body}'")
            spec = cands[0]
            if negated and not spec.negatable:
                raise unknown(f"unknown option `{body}'")
            if (spec.kind == "bool" or negated) and eq:
                name = f"no-{spec.long}" if negated else spec.long
                raise Die(f"option `{name}' takes no value", 129, "error: ")
            if spec.kind == "string" and not eq and not negated:
                if i >= len(argv):
                    raise Die(f"option `{spec.long}' requires a value", 129, "error: ")
                val = argv[i]
                i += 1
                eq = "="
            if spec.kind == "lastarg" and not eq and not negated and i < len(argv):
                val = argv[i]
                i += 1
                eq = "="
            handle(spec, val if eq else None, negated)
            continue
        if a.startswith("-") and len(a) > 1:
            j = 1
            while j < len(a):
                c = a[j]
                found = shorts.get(c)
                if found is None:
                    if usage is not None and c == "h":
                        raise _usage_exit(out, usage)
                    raise unknown(f"unknown switch `{c}'")
                spec = found
                if spec.kind == "optarg":
                    rest = a[j + 1:]
                    handle(spec, rest if rest else None, False)
                    break
                if spec.kind == "string":
                    rest = a[j + 1:]
                    if not rest:
                        if i >= len(argv):
                            raise Die(f"switch `{c}' requires a value", 129, "error: ")
                        rest = argv[i]
                        i += 1
                    handle(spec, rest, False)
                    break
                handle(spec, None, False)
                j += 1
            continue
        args.append(a)
    return args


def split_lab_options(argv: list[str], flags: Flags) -> tuple[list[str], str | None, Flags]:
    """Take --git-dir, --flags and --baseline out of argv (before "--")."""
    rest: list[str] = []
    gitdir = None
    spec = None
    use_baseline = False
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            rest.extend(argv[i:])
            break
        if a in ("--git-dir", "--flags") and i + 1 < len(argv):
            if a == "--git-dir":
                gitdir = argv[i + 1]
            else:
                spec = argv[i + 1]
            i += 2
            continue
        if a.startswith("--git-dir="):
            gitdir = a.split("=", 1)[1]
        elif a.startswith("--flags="):
            spec = a.split("=", 1)[1]
        elif a == "--baseline":
            use_baseline = True
        else:
            rest.append(a)
        i += 1
    if spec is not None or use_baseline:
        flags = resolve(spec, use_baseline)
    return rest, gitdir, flags
