"""git config reading: one parser, one boolean rule, one integer rule (git's config.c).

Contract: parse_config(text) turns git's config syntax (sections, "subsections",
quotes, backslash escapes, comments) into {"section.key" or "section.sub.key":
value}, last value winning; section and key names are lower-cased, subsection
names kept; a bare key (no "=") is stored as "true". read_config(gitdir) is
parse_config of $GIT_DIR/config ({} when there is none).

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
from typing import Mapping

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


def read_config(gitdir: str) -> dict[str, str]:
    """parse_config of $GIT_DIR/config; {} when the file does not exist."""
    try:
        with open(os.path.join(gitdir, "config"), "r", encoding="utf-8",
                  errors="surrogateescape") as f:
            return parse_config(f.read())
    except FileNotFoundError:
        return {}


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
