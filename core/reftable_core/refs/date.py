"""git's date parser for identities (date.c parse_date_basic), as GIT_COMMITTER_DATE uses it.

Contract: parse_date(text) -> (epoch seconds, zone offset in minutes east of UTC),
exactly what git's parse_date() would print as "<seconds> <+hhmm>": the raw
"<seconds> <+hhmm>" and "@<seconds> <+hhmm>" forms, RFC 2822 ("Thu, 07 Apr 2005
22:13:13 +0200"), ISO 8601 ("2005-04-07T22:13:13", "2005-04-07 22:13:13 +0200",
compact "20050407T221313"), month / weekday / zone names, AM/PM, and git's
"random crap" rules (an unparseable zone such as "+99999" is ignored and the
local zone used). A date git refuses raises ReftableError("invalid date format: ...").
The local zone comes from time.mktime (the process's TZ), as git's mktime() does.

show_date(seconds, tz, mode, now=None) -> text: git's show_date for every DateMode
(default, human, relative, short, iso8601, iso8601-strict, rfc2822, raw, unix,
format:<strftime>, each with -local); tz is git's decimal +hhmm; relative and human
read "now" from $GIT_TEST_DATE_NOW as git's get_time does (date_now()), else the clock.
parse_date_format(text) -> DateMode, git's parse_date_format (ReftableError with git's
die() words when it refuses the text).
"""
from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import ReftableError

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
WEEKDAYS = ("Sundays", "Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays",
            "Saturdays")
# (name, hours east of UTC, daylight saving adds one hour): git's timezone_names
ZONES = (
    ("IDLW", -12, 0), ("NT", -11, 0), ("CAT", -10, 0), ("HST", -10, 0), ("HDT", -10, 1),
    ("YST", -9, 0), ("YDT", -9, 1), ("PST", -8, 0), ("PDT", -8, 1), ("MST", -7, 0),
    ("MDT", -7, 1), ("CST", -6, 0), ("CDT", -6, 1), ("EST", -5, 0), ("EDT", -5, 1),
    ("AST", -3, 0), ("ADT", -3, 1), ("WAT", -1, 0), ("GMT", 0, 0), ("UTC", 0, 0),
    ("Z", 0, 0), ("WET", 0, 0), ("BST", 0, 1), ("CET", 1, 0), ("MET", 1, 0),
    ("MEWT", 1, 0), ("MEST", 1, 1), ("CEST", 1, 1), ("MESZ", 1, 1), ("FWT", 1, 0),
    ("FST", 1, 1), ("EET", 2, 0), ("EEST", 2, 1), ("WAST", 7, 0), ("WADT", 7, 1),
    ("CCT", 8, 0), ("JST", 9, 0), ("EAST", 10, 0), ("EADT", 10, 1), ("GST", 10, 0),
    ("NZT", 12, 0), ("NZST", 12, 0), ("NZDT", 12, 1), ("IDLE", 12, 0),
)
_MDAYS = (0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)
TIMESTAMP_MAX = ((2100 - 1970) * 365 + 32) * 24 * 60 * 60 - 1   # 2099-12-31T23:59:59Z
UINTMAX = 2 ** 64 - 1
_DIGITS = "0123456789"
_ALPHA = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_CSPACE = " \t\n\v\f\r"


@dataclass(slots=True)
class _Tm:
    """struct tm as parse_date_basic fills it (-1: not seen yet)."""
    year: int = -1
    mon: int = -1
    mday: int = -1
    hour: int = -1
    min: int = -1
    sec: int = -1
    wday: int = 0


def _isdigit(s: str, i: int) -> bool:
    return i < len(s) and s[i] in _DIGITS


def _isalpha(s: str, i: int) -> bool:
    return i < len(s) and s[i] in _ALPHA


def _digits(s: str, i: int) -> tuple[int, int]:
    """(value, end) of the digit run at i (0, i when there is none)."""
    j = i
    while _isdigit(s, j):
        j += 1
    return (int(s[i:j]) if j > i else 0), j


def _strtol(s: str, i: int) -> tuple[int, int]:
    """C strtol / strtoul base 10: spaces, a sign, digits; no digits -> (0, i)."""
    j = i
    while j < len(s) and s[j] in _CSPACE:
        j += 1
    neg = j < len(s) and s[j] == "-"
    if j < len(s) and s[j] in "+-":
        j += 1
    v, e = _digits(s, j)
    if e == j:
        return 0, i
    return (-v if neg else v), e


def _cdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def tm_to_time_t(tm: _Tm) -> int:
    """git's tm_to_time_t: mktime in UTC without normalization, 1970..2099 only."""
    year, month, day = tm.year - 70, tm.mon, tm.mday
    if year < 0 or year > 129 or month < 0 or month > 11:
        return -1
    if month < 2 or (year + 2) % 4:
        day -= 1
    if tm.hour < 0 or tm.min < 0 or tm.sec < 0:
        return -1
    return ((year * 365 + (year + 1) // 4 + _MDAYS[month] + day) * 86400
            + tm.hour * 3600 + tm.min * 60 + tm.sec)


def _match_string(s: str, i: int, word: str) -> int:
    n = 0
    while i + n < len(s):
        c = s[i + n]
        w = word[n] if n < len(word) else "\0"
        if c == w or c.upper() == w.upper():
            n += 1
            continue
        if not (c in _ALPHA or c in _DIGITS):
            break
        return 0
    return n


def _match_alpha(s: str, i: int, tm: _Tm, offset: list[int]) -> int:
    for k, name in enumerate(MONTHS):
        m = _match_string(s, i, name)
        if m >= 3:
            tm.mon = k
            return m
    for k, name in enumerate(WEEKDAYS):
        m = _match_string(s, i, name)
        if m >= 3:
            tm.wday = k
            return m
    for name, off, dst in ZONES:
        m = _match_string(s, i, name)
        if m >= 3 or m == len(name):
            if offset[0] == -1:
                offset[0] = 60 * (off + dst)
            return m
    if _match_string(s, i, "PM") == 2:
        tm.hour = _cmod(tm.hour, 12) + 12
        return 2
    if _match_string(s, i, "AM") == 2:
        tm.hour = _cmod(tm.hour, 12)
        return 2
    if s[i] == "T" and _isdigit(s, i + 1) and tm.hour == -1:
        tm.min = tm.sec = 0
        return 1
    j = i + 1
    while _isalpha(s, j):
        j += 1
    return j - i


def _cmod(a: int, b: int) -> int:
    return a - _cdiv(a, b) * b


def _set_date(year: int, month: int, day: int, now_tm: _Tm | None, now: int, tm: _Tm) -> int:
    if not (0 < month < 13 and 0 < day < 32):
        return -1
    r = _Tm(tm.year, tm.mon, tm.mday, tm.hour, tm.min, tm.sec, tm.wday) if now_tm else tm
    r.mon = month - 1
    r.mday = day
    if year == -1:
        if now_tm is None:
            return 1
        r.year = now_tm.year
    elif 1970 <= year < 2100:
        r.year = year - 1900
    elif 70 < year < 100:
        r.year = year
    elif year < 38:
        r.year = year + 100
    else:
        return -1
    if now_tm is None:
        return 0
    specified = tm_to_time_t(r)
    if specified != -1 and now + 10 * 24 * 3600 < specified:
        return -1                                  # not more than ten days into the future
    tm.mon, tm.mday = r.mon, r.mday
    if year != -1:
        tm.year = r.year
    return 0


def _set_time(hour: int, minute: int, second: int, tm: _Tm) -> int:
    if 0 <= hour <= 24 and 0 <= minute < 60 and 0 <= second <= 60:
        tm.hour, tm.min, tm.sec = hour, minute, second
        return 0
    return -1


def _date_known(tm: _Tm) -> bool:
    return tm.year != -1 and tm.mon != -1 and tm.mday != -1


def _gmtime(t: int) -> _Tm | None:
    try:
        g = time.gmtime(t)
    except (OverflowError, OSError, ValueError):
        return None
    return _Tm(g.tm_year - 1900, g.tm_mon - 1, g.tm_mday, g.tm_hour, g.tm_min, g.tm_sec,
               (g.tm_wday + 1) % 7)


def _match_multi_number(num: int, c: str, s: str, i: int, end: int, tm: _Tm) -> int:
    num2, end = _strtol(s, end + 1)
    num3 = -1
    if end < len(s) and s[end] == c and _isdigit(s, end + 1):
        num3, end = _strtol(s, end + 1)
    if c == ":":
        num3 = max(num3, 0)
        if _set_time(num, num2, num3, tm) != 0:
            return 0
        if end < len(s) and s[end] == "." and _isdigit(s, end + 1) and _date_known(tm):
            end = _strtol(s, end + 1)[1]
        return end - i
    now = int(time.time())
    refuse = _gmtime(now)
    if num > 70:
        if _set_date(num, num2, num3, None, now, tm) == 0:
            return end - i
        if _set_date(num, num3, num2, None, now, tm) == 0:
            return end - i
    if c != "." and _set_date(num3, num, num2, refuse, now, tm) == 0:
        return end - i
    if _set_date(num3, num2, num, refuse, now, tm) == 0:
        return end - i
    if c == "." and _set_date(num3, num, num2, refuse, now, tm) == 0:
        return end - i
    return 0


def _nodate(tm: _Tm) -> bool:
    return (tm.year & tm.mon & tm.mday & tm.hour & tm.min & tm.sec) < 0    # nothing set yet


def _match_digit(s: str, i: int, tm: _Tm, offset: list[int], gmt: list[bool]) -> int:
    num, end = _digits(s, i)
    num = min(num, UINTMAX)
    if num >= 100000000 and _nodate(tm):
        g = _gmtime(num)
        if g is not None:
            tm.year, tm.mon, tm.mday, tm.hour, tm.min, tm.sec, tm.wday = (
                g.year, g.mon, g.mday, g.hour, g.min, g.sec, g.wday)
            gmt[0] = True
            return end - i
    if end < len(s) and s[end] in ":./-" and _isdigit(s, end + 1):
        m = _match_multi_number(num, s[end], s, i, end, tm)
        if m:
            return m
    n = end - i
    if n in (8, 6):
        n1, n2, n3 = num // 10000, (num % 10000) // 100, num % 100
        if n == 8:
            _set_date(n1, n2, n3, None, int(time.time()), tm)
        elif (_set_time(n1, n2, n3, tm) == 0 and end < len(s) and s[end] == "."
              and _isdigit(s, end + 1)):
            end = _strtol(s, end + 1)[1]
        return end - i
    if tm.hour == -1 and tm.min == 0 and tm.sec == 0:          # maybe ISO 8601 HHMM / HH
        n1, n2 = (num // 100, num % 100) if n == 4 else (num, 0)
        if n in (4, 2) and not _nodate(tm) and _set_time(n1, n2, 0, tm) == 0:
            return n
        tm.min = tm.sec = -1
    if n == 4:
        if num <= 1400 and offset[0] == -1:
            offset[0] = (num // 100) * 60 + num % 100
        elif 1900 < num < 2100:
            tm.year = num - 1900
        return n
    if n > 2:
        return n
    if 0 < num < 32 and tm.mday < 0:
        tm.mday = num
        return n
    if n == 2 and tm.year < 0:
        if num < 10 and tm.mday >= 0:
            tm.year = num + 100
            return n
        if num >= 70:
            tm.year = num
            return n
    if 0 < num < 13 and tm.mon < 0:
        tm.mon = num - 1
    return n


def _match_tz(s: str, i: int, offset: list[int]) -> int:
    hour, end = _strtol(s, i + 1)
    n = end - (i + 1)
    minute = 0
    if n == 4:
        minute, hour = hour % 100, hour // 100
    elif n != 2:
        minute = 99
    elif end < len(s) and s[end] == ":":
        minute, end = _strtol(s, end + 1)
        if end - (i + 1) != 5 or minute < 0:
            minute = 99
    if 0 <= minute < 60 and 0 <= hour < 24:
        off = hour * 60 + minute
        offset[0] = -off if s[i] == "-" else off
    return end - i


def _object_header_date(s: str) -> tuple[int, int] | None:
    """"<seconds> <+hhmm>" and nothing else (git's match_object_header_date)."""
    if not _isdigit(s, 0):
        return None
    stamp, end = _digits(s, 0)
    if (stamp >= UINTMAX or end + 1 >= len(s) or s[end] != " "
            or s[end + 1] not in "+-"):
        return None
    start = end + 2
    ofs, end = _strtol(s, start)
    if (end < len(s) and s[end] != "\n") or end != start + 4:
        return None
    ofs = _cdiv(ofs, 100) * 60 + _cmod(ofs, 100)
    return stamp, (-ofs if s[start - 1] == "-" else ofs)


def parse_date(text: str) -> tuple[int, int]:
    """(seconds, zone minutes) as git's parse_date gives them; ReftableError if refused."""
    s = text.split("\0", 1)[0]
    if s.startswith("@"):
        raw = _object_header_date(s[1:])
        if raw is not None:
            return raw
    tm = _Tm()
    offset = [-1]
    gmt = [False]
    i = 0
    while i < len(s) and s[i] != "\n":
        c = s[i]
        if c in _ALPHA:
            m = _match_alpha(s, i, tm, offset)
        elif c in _DIGITS:
            m = _match_digit(s, i, tm, offset, gmt)
        elif c in "+-" and _isdigit(s, i + 1):
            m = _match_tz(s, i, offset)
        else:
            m = 0
        i += m or 1
    ts = tm_to_time_t(tm)
    if ts == -1:
        raise ReftableError(f"invalid date format: {text}")
    off = offset[0]
    if off == -1:
        local = int(time.mktime((tm.year + 1900, tm.mon + 1, tm.mday, tm.hour, tm.min,
                                 tm.sec, 0, 0, -1)))
        off = (ts - local) // 60 if ts > local else -((local - ts) // 60)
    if not gmt[0]:
        if (off > 0 and off * 60 > ts) or (off < 0 and -off * 60 > TIMESTAMP_MAX - ts):
            raise ReftableError(f"invalid date format: {text}")
        ts -= off * 60
    return ts, off


# -- show_date: git's date formats (date.c show_date, parse_date_format) ----------
DATE_NORMAL = "default"
DATE_HUMAN = "human"
DATE_RELATIVE = "relative"
DATE_SHORT = "short"
DATE_ISO8601 = "iso8601"
DATE_ISO8601_STRICT = "iso8601-strict"
DATE_RFC2822 = "rfc2822"
DATE_STRFTIME = "format"
DATE_RAW = "raw"
DATE_UNIX = "unix"

# parse_date_type's prefixes, in its order
_DATE_TYPES = (("relative", DATE_RELATIVE), ("iso8601-strict", DATE_ISO8601_STRICT),
               ("iso-strict", DATE_ISO8601_STRICT), ("iso8601", DATE_ISO8601),
               ("iso", DATE_ISO8601), ("rfc2822", DATE_RFC2822), ("rfc", DATE_RFC2822),
               ("short", DATE_SHORT), ("default", DATE_NORMAL), ("human", DATE_HUMAN),
               ("raw", DATE_RAW), ("unix", DATE_UNIX), ("format", DATE_STRFTIME))
_SHORT_DAYS = ("Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat")
_SHORT_MONTHS = tuple(m[:3] for m in MONTHS)


@dataclass(frozen=True, slots=True)
class DateMode:
    """struct date_mode: a type, -local, and the strftime format of format:<fmt>."""
    type: str = DATE_NORMAL
    local: bool = False
    strftime_fmt: str = ""


def parse_date_format(fmt: str, is_tty: bool = False) -> DateMode:
    """git's parse_date_format; ReftableError with git's die() text when refused
    ("unknown date format <fmt>", "date format missing colon separator: <fmt>").
    "auto:<fmt>" is <fmt> on a terminal, else default (is_tty says which)."""
    if fmt.startswith("auto:"):
        fmt = fmt[5:] if is_tty else "default"
    if fmt == "local":
        fmt = "default-local"
    for prefix, typ in _DATE_TYPES:
        if fmt.startswith(prefix):
            rest = fmt[len(prefix):]
            break
    else:
        raise ReftableError(f"unknown date format {fmt}")
    local = rest.startswith("-local")
    if local:
        rest = rest[6:]
    if typ == DATE_STRFTIME:
        if not rest.startswith(":"):
            raise ReftableError(f"date format missing colon separator: {fmt}")
        return DateMode(typ, local, rest[1:])
    if rest:
        raise ReftableError(f"unknown date format {fmt}")
    return DateMode(typ, local)


def _atoi(s: str) -> int:
    v, _ = _strtol(s, 0)
    return v


def date_now(environ: Mapping[str, str] | None = None) -> int:
    """git's get_time: $GIT_TEST_DATE_NOW (atoi) when set, else the clock."""
    env = os.environ if environ is None else environ
    x = env.get("GIT_TEST_DATE_NOW")
    return _atoi(x) if x is not None else int(time.time())


def show_date_relative(t: int, now: int) -> str:
    if now < t:
        return "in the future"
    diff = now - t
    if diff < 90:
        return f"{diff} second{'s' if diff != 1 else ''} ago"
    diff = (diff + 30) // 60
    if diff < 90:
        return f"{diff} minute{'s' if diff != 1 else ''} ago"
    diff = (diff + 30) // 60
    if diff < 36:
        return f"{diff} hour{'s' if diff != 1 else ''} ago"
    diff = (diff + 12) // 24
    if diff < 14:
        return f"{diff} day{'s' if diff != 1 else ''} ago"
    if diff < 70:
        w = (diff + 3) // 7
        return f"{w} week{'s' if w != 1 else ''} ago"
    if diff < 365:
        m = (diff + 15) // 30
        return f"{m} month{'s' if m != 1 else ''} ago"
    if diff < 1825:
        totalmonths = (diff * 12 * 2 + 365) // (365 * 2)
        years, months = totalmonths // 12, totalmonths % 12
        if months:
            return (f"{years} year{'s' if years != 1 else ''}, "
                    f"{months} month{'s' if months != 1 else ''} ago")
        return f"{years} year{'s' if years != 1 else ''} ago"
    y = (diff + 183) // 365
    return f"{y} year{'s' if y != 1 else ''} ago"


def _tm_of(st: time.struct_time) -> _Tm:
    return _Tm(st.tm_year - 1900, st.tm_mon - 1, st.tm_mday, st.tm_hour, st.tm_min,
               st.tm_sec, (st.tm_wday + 1) % 7)


def _local_tzoffset(t: int) -> tuple[int, time.struct_time]:
    """local_time_tzoffset: the local zone at t as git's decimal +hhmm, and localtime."""
    st = time.localtime(t)
    t_local = tm_to_time_t(_tm_of(st))
    if t_local == -1:
        return 0, st
    if t_local < t:
        eastwest, offset = -1, t - t_local
    else:
        eastwest, offset = 1, t_local - t
    offset //= 60
    return (offset % 60 + (offset // 60) * 100) * eastwest, st


def _zone_minutes(tz: int) -> int:
    m = abs(tz)
    m = (m // 100) * 60 + m % 100
    return -m if tz < 0 else m


def _strftime(fmt: str, st: time.struct_time, tz: int, suppress_tz_name: bool) -> str:
    """strbuf_addftime: %z, %s and (when suppressed) %Z by git, the rest by strftime."""
    if not fmt:
        return ""
    out = []
    i = 0
    n = len(fmt)
    while i < n:
        c = fmt[i]
        if c != "%" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        d = fmt[i + 1]
        if d == "%":
            out.append("%%")
        elif d == "s":
            out.append(str(tm_to_time_t(_tm_of(st)) - 3600 * _cdiv(tz, 100)
                           - 60 * (tz - _cdiv(tz, 100) * 100)))
        elif d == "z":
            out.append(f"{tz:+05d}")
        elif d == "Z" and suppress_tz_name:
            pass
        else:
            out.append("%" + d)
        i += 2
    return time.strftime("".join(out), st)


def show_date(t: int, tz: int, mode: DateMode, now: int | None = None) -> str:
    """git's show_date(time, tz, mode): tz is git's decimal +hhmm (-130 is -01:30);
    now (for relative and human) defaults to date_now()."""
    if mode.type == DATE_UNIX:
        return str(t)
    human_tm: _Tm | None = None
    human_tz = -1
    if mode.type == DATE_HUMAN:
        if now is None:
            now = date_now()
        human_tz, hst = _local_tzoffset(now)
        human_tm = _tm_of(hst)
    if mode.local:
        tz = _local_tzoffset(t)[0]
    if mode.type == DATE_RAW:
        return f"{t} {tz:+05d}"
    if mode.type == DATE_RELATIVE:
        return show_date_relative(t, date_now() if now is None else now)
    try:
        st = time.localtime(t) if mode.local else time.gmtime(t + _zone_minutes(tz) * 60)
    except (OverflowError, OSError, ValueError):
        st, tz = time.gmtime(0), 0
    tm = _tm_of(st)
    if mode.type == DATE_SHORT:
        return f"{tm.year + 1900:04d}-{tm.mon + 1:02d}-{tm.mday:02d}"
    if mode.type == DATE_ISO8601:
        return (f"{tm.year + 1900:04d}-{tm.mon + 1:02d}-{tm.mday:02d} "
                f"{tm.hour:02d}:{tm.min:02d}:{tm.sec:02d} {tz:+05d}")
    if mode.type == DATE_ISO8601_STRICT:
        s = (f"{tm.year + 1900:04d}-{tm.mon + 1:02d}-{tm.mday:02d}T"
             f"{tm.hour:02d}:{tm.min:02d}:{tm.sec:02d}")
        if tz == 0:
            return s + "Z"
        a = abs(tz)
        return s + ("+" if tz >= 0 else "-") + f"{a // 100:02d}:{a % 100:02d}"
    if mode.type == DATE_RFC2822:
        return (f"{_SHORT_DAYS[tm.wday]}, {tm.mday} {_SHORT_MONTHS[tm.mon]} "
                f"{tm.year + 1900} {tm.hour:02d}:{tm.min:02d}:{tm.sec:02d} {tz:+05d}")
    if mode.type == DATE_STRFTIME:
        return _strftime(mode.strftime_fmt, st, tz, not mode.local)
    return _show_date_normal(t, tm, tz, human_tm, human_tz, mode.local, now)


def _show_date_normal(t: int, tm: _Tm, tz: int, human_tm: _Tm | None, human_tz: int,
                      local: bool, now: int | None) -> str:
    htm = human_tm if human_tm is not None else _Tm(0, 0, 0, 0, 0, 0, 0)
    hide_tz = local or tz == human_tz
    hide_year = tm.year == htm.year
    hide_date = hide_wday = hide_time = hide_seconds = False
    if hide_year and tm.mon == htm.mon:
        if tm.mday > htm.mday:
            pass
        elif tm.mday == htm.mday:
            hide_date = hide_wday = True
        elif tm.mday + 5 > htm.mday:
            hide_date = True
    if hide_wday:
        return show_date_relative(t, date_now() if now is None else now)
    if htm.year:
        hide_seconds = True
        hide_tz = hide_tz or not hide_date
        hide_wday = hide_time = not hide_year
    buf = ""
    if not hide_wday:
        buf += f"{_SHORT_DAYS[tm.wday]} "
    if not hide_date:
        buf += f"{_SHORT_MONTHS[tm.mon]} {tm.mday} "
    if not hide_time:
        buf += f"{tm.hour:02d}:{tm.min:02d}"
        if not hide_seconds:
            buf += f":{tm.sec:02d}"
    else:
        buf = buf.rstrip()
    if not hide_year:
        buf += f" {tm.year + 1900}"
    if not hide_tz:
        buf += f" {tz:+05d}"
    return buf
