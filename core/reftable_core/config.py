"""git config reading: one parser, one boolean rule, one integer rule (git's config.c).

Contract: parse_config(text) turns git's config syntax (sections, "subsections",
quotes, backslash escapes, comments) into {"section.key" or "section.sub.key":
value}, last value winning; section and key names are lower-cased, subsection
names kept; a bare key (no "=") is stored as "true". read_config(gitdir) is
what git reads for the repository: the system and global files (config_files:
$GIT_CONFIG_SYSTEM or /etc/gitconfig, $GIT_CONFIG_GLOBAL or the XDG file and
~/.gitconfig, as git's environment variables say), then $GIT_DIR/config.

Command-line config (git -c, which git passes on in the environment):
canonical_key(name) lower-cases a key's section and key name, keeping the
subsection. parse_config_parameters(text) reads GIT_CONFIG_PARAMETERS
(shell-quoted 'key=value' or 'key'='value' words; 'key' or 'key'= alone, no
value, means "true"),
env_config(environ) GIT_CONFIG_COUNT with GIT_CONFIG_KEY_<n>/GIT_CONFIG_VALUE_<n>
and then GIT_CONFIG_PARAMETERS, later entries winning; both raise ConfigError
with git's text on a malformed value. push_config_parameter(environ, key, value)
appends one entry to environ["GIT_CONFIG_PARAMETERS"] as git -c does.

parse_bool(value) is git_parse_maybe_bool: true/yes/on (any case) and any
integer git_parse_int accepts that is nonzero are True; false/no/off and "" and
integer zero are False; anything else is None. parse_int(value) is
git_parse_int: strtoimax with base 0 (leading whitespace, sign, 0x hex, 0 octal)
then an optional k/m/g unit (case-insensitive, powers of 1024), the result
within +-INT_MAX; ValueError otherwise. config_bool / config_int read one key
with a default and raise ConfigError with git's die() text on a bad value.
"""
from __future__ import annotations

import os
import re
from typing import Mapping, MutableMapping

from .errors import ConfigError

INT_MAX = (1 << 31) - 1
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
# strtoimax(value, &end, 0): C isspace, an optional sign, then hex, octal or decimal
_STRTOIMAX = re.compile(r"[ \t\n\v\f\r]*([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)(.*)",
                        re.DOTALL)


# -- the file ---------------------------------------------------------------------

def _unquote_value(raw: str) -> str:
    out = []
    in_quote = False
    i = 0
    n = len(raw)
    while i < n:
        c = raw[i]
        if c == '"':
            in_quote = not in_quote
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(raw[i], raw[i]))
        elif c in "#;" and not in_quote:
            break
        else:
            out.append(c)
        i += 1
    return "".join(out).strip() if not in_quote else "".join(out)


def parse_config(text: str) -> dict[str, str]:
    """git config text -> {"section.key" or "section.sub.key": value} (last wins)."""
    result: dict[str, str] = {}
    section = ""
    for line in text.splitlines():
        s = line.strip()
        if not s or s[0] in "#;":
            continue
        if s.startswith("["):
            end = s.find("]")
            if end < 0:
                continue
            head = s[1:end].strip()
            if '"' in head:
                name, _, sub = head.partition('"')
                section = name.strip().lower() + "." + sub.rsplit('"', 1)[0].replace('\\"', '"')
            else:
                parts = head.split(".", 1)
                section = parts[0].lower() + ("." + parts[1] if len(parts) > 1 else "")
            s = s[end + 1:].strip()
            if not s or s[0] in "#;":
                continue
        key, eq, raw = s.partition("=")
        key = key.strip().lower()
        value = _unquote_value(raw.strip()) if eq else "true"
        result[f"{section}.{key}" if section else key] = value
    return result


def _read_file(path: str) -> dict[str, str]:
    try:
        with open(path, "r", encoding="utf-8", errors="surrogateescape") as f:
            return parse_config(f.read())
    except (FileNotFoundError, NotADirectoryError):
        return {}


def config_files(environ: Mapping[str, str]) -> list[str]:
    """The system and global config files git reads before the repository's, in
    git's order (a later one wins): $GIT_CONFIG_SYSTEM, else /etc/gitconfig, unless
    $GIT_CONFIG_NOSYSTEM is true; then $GIT_CONFIG_GLOBAL if set, else
    $XDG_CONFIG_HOME/git/config (default $HOME/.config/git/config) and
    $HOME/.gitconfig."""
    files: list[str] = []
    if not parse_bool(environ.get("GIT_CONFIG_NOSYSTEM", "")):
        files.append(environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig")
    if "GIT_CONFIG_GLOBAL" in environ:
        if environ["GIT_CONFIG_GLOBAL"]:
            files.append(environ["GIT_CONFIG_GLOBAL"])
        return files
    home = environ.get("HOME")
    xdg = environ.get("XDG_CONFIG_HOME")
    if xdg:
        files.append(os.path.join(xdg, "git", "config"))
    elif home:
        files.append(os.path.join(home, ".config", "git", "config"))
    if home:
        files.append(os.path.join(home, ".gitconfig"))
    return files


def read_config(gitdir: str, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The config git sees in gitdir: the system and global files (config_files of
    environ, default os.environ) and then $GIT_DIR/config, later values winning;
    {} when there is none. extensions.* count only from the repository's own file
    (git's repository format check reads that file alone). [include] is not
    followed."""
    result: dict[str, str] = {}
    for path in config_files(os.environ if environ is None else environ):
        result.update((k, v) for k, v in _read_file(path).items()
                      if not k.startswith("extensions."))
    result.update(_read_file(os.path.join(gitdir, "config")))
    return result


# -- command-line config --------------------------------------------------------

def canonical_key(name: str) -> str:
    """section.key and section.sub.key with the section and key lower-cased."""
    section, dot, rest = name.partition(".")
    if not dot:
        return name.lower()
    sub, dot2, key = rest.rpartition(".")
    return f"{section.lower()}.{sub}.{key.lower()}" if dot2 else f"{section.lower()}.{key.lower()}"


def _sq_word(text: str, pos: int) -> tuple[str, int] | None:
    """git's sq_dequote_step: one 'quoted' word (with '\\'' and '\\!' escapes) at pos."""
    if pos >= len(text) or text[pos] != "'":
        return None
    out = []
    i = pos + 1
    while True:
        j = text.find("'", i)
        if j < 0:
            return None
        out.append(text[i:j])
        i = j + 1
        if text.startswith(("\\'", "\\!"), i) and text.startswith("'", i + 2):
            out.append(text[i + 1])
            i += 3
            continue
        return "".join(out), i


def parse_config_parameters(text: str) -> dict[str, str]:
    """GIT_CONFIG_PARAMETERS -> {canonical key: value} (later entries win)."""
    result: dict[str, str] = {}
    i = 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return result
        word = _sq_word(text, i)
        if word is None:
            raise ConfigError("bogus format in GIT_CONFIG_PARAMETERS")
        key, i = word
        value: str | None
        if text.startswith("=", i):              # new style: 'key'='value', 'key'= (no value)
            word = _sq_word(text, i + 1)
            if word is None:
                value, i = None, i + 1
            else:
                value, i = word
        else:                                     # old style: 'key=value' or 'key'
            key, eq, val = key.partition("=")
            value = val if eq else None
        if i < len(text) and not text[i].isspace():
            raise ConfigError("bogus format in GIT_CONFIG_PARAMETERS")
        result[canonical_key(key)] = "true" if value is None else value


def env_config(environ: Mapping[str, str]) -> dict[str, str]:
    """The config git takes from the environment: GIT_CONFIG_COUNT's entries,
    then GIT_CONFIG_PARAMETERS (git -c)."""
    result: dict[str, str] = {}
    count = environ.get("GIT_CONFIG_COUNT")
    if count:
        try:
            n = parse_int(count)
        except ValueError:
            raise ConfigError("bogus count in GIT_CONFIG_COUNT") from None
        for k in range(n):
            key = environ.get(f"GIT_CONFIG_KEY_{k}")
            if not key:
                raise ConfigError(f"missing config key GIT_CONFIG_KEY_{k}")
            value = environ.get(f"GIT_CONFIG_VALUE_{k}")
            if value is None:
                raise ConfigError(f"missing config value GIT_CONFIG_VALUE_{k}")
            result[canonical_key(key)] = value
    params = environ.get("GIT_CONFIG_PARAMETERS")
    if params:
        result.update(parse_config_parameters(params))
    return result


def _sq_quote(word: str) -> str:
    return "'" + word.replace("'", "'\\''").replace("!", "'\\!'") + "'"


def push_config_parameter(environ: MutableMapping[str, str], key: str,
                          value: str | None) -> None:
    """Append 'key'='value' ('key'= for None) to GIT_CONFIG_PARAMETERS."""
    entry = _sq_quote(key) + "=" + ("" if value is None else _sq_quote(value))
    old = environ.get("GIT_CONFIG_PARAMETERS")
    environ["GIT_CONFIG_PARAMETERS"] = f"{old} {entry}" if old else entry


# -- values -------------------------------------------------------------------------

def parse_int(value: str) -> int:
    """git_parse_int: the value as a C int, k/m/g units allowed; ValueError if not.

    The error's args[0] is git's reason: "invalid unit" or "out of range"."""
    m = _STRTOIMAX.fullmatch(value)
    if m is None:
        raise ValueError("invalid unit")
    sign, digits, unit = m.groups()
    factor = _UNITS.get(unit.lower())
    if factor is None:
        raise ValueError("invalid unit")
    if digits[:2] in ("0x", "0X"):
        v = int(digits[2:], 16)
    elif digits.startswith("0"):
        v = int(digits, 8)
    else:
        v = int(digits)
    if sign == "-":
        v = -v
    v *= factor
    if not -INT_MAX <= v <= INT_MAX:          # git's bound is +-INT_MAX
        raise ValueError("out of range")
    return v


def parse_bool(value: str) -> bool | None:
    """git_parse_maybe_bool: True, False, or None when value is not a boolean."""
    v = value.lower()
    if v in ("true", "yes", "on"):
        return True
    if v in ("", "false", "no", "off"):
        return False
    try:
        return parse_int(value) != 0
    except ValueError:
        return None


def config_bool(config: Mapping[str, str], key: str, default: bool) -> bool:
    """git_config_bool of config[key]; default when the key is not set."""
    value = config.get(key)
    if value is None:
        return default
    b = parse_bool(value)
    if b is None:
        raise ConfigError(f"bad boolean config value '{value}' for '{key}'")
    return b


def config_int(config: Mapping[str, str], key: str, default: int) -> int:
    """git_config_int of config[key]; default when the key is not set."""
    value = config.get(key)
    if value is None:
        return default
    try:
        return parse_int(value)
    except ValueError as e:
        raise ConfigError(f"bad numeric config value '{value}' for '{key}': {e}") from None
