"""reftable_core.config: the config parser, git's boolean rule and git's integer rule."""
from __future__ import annotations

from pathlib import Path

import pytest

from reftable_core.config import (config_bool, config_int, parse_bool, parse_config, parse_int,
                                  read_config)
from reftable_core.errors import ConfigError, ReftableError

# value -> git_parse_maybe_bool (None: git dies "bad boolean config value")
BOOLS = {
    "true": True, "TRUE": True, "yes": True, "On": True, "1": True,
    "2": True, "-1": True, "+3": True, "0x10": True, "010": True, "1k": True, "1K": True,
    "  7": True, "2147483647": True, "-2147483647": True, "2097151k": True,
    "false": False, "No": False, "OFF": False, "0": False, "-0": False, "0x0": False,
    "00": False, "": False,
    "nah": None, "08": None, "7 ": None, "0x": None, "1kb": None, "2g": None,
    "2147483648": None, "-2147483648": None, "2097152k": None, "t": None, "y": None,
}

# value -> git_parse_int (a str: the reason git gives)
INTS = {
    "0": 0, "17": 17, "-5": -5, "+5": 5, "0x1F": 31, "0X1f": 31, "010": 8, "  7": 7,
    "1k": 1024, "3M": 3 << 20, "1g": 1 << 30, "-2k": -2048,
    "2147483647": (1 << 31) - 1, "-2147483647": -((1 << 31) - 1),
    "": "invalid unit", "7 ": "invalid unit", "08": "invalid unit", "1kb": "invalid unit",
    "yes": "invalid unit", "0x": "invalid unit", "1.5": "invalid unit",
    "2g": "out of range", "2147483648": "out of range", "-2147483648": "out of range",
}


def test_parse_config() -> None:
    cfg = parse_config('[core]\n\tbare = false\n\tlogAllRefUpdates\n[extensions]\n'
                       '  refStorage = reftable ; comment\n  objectFormat = "sha256"\n'
                       '[remote "origin"]\n\turl = x # c\n[user]\n  name = "A \\"B\\" C"\n')
    assert cfg["core.bare"] == "false"
    assert cfg["core.logallrefupdates"] == "true"
    assert cfg["extensions.refstorage"] == "reftable"
    assert cfg["extensions.objectformat"] == "sha256"
    assert cfg["remote.origin.url"] == "x"
    assert cfg["user.name"] == 'A "B" C'


def test_parse_config_last_wins_and_empty_value() -> None:
    cfg = parse_config("[core]\n\tbare = true\n[Core]\n\tBare = false\n\tempty =\n")
    assert cfg["core.bare"] == "false"
    assert cfg["core.empty"] == ""
    assert config_bool(cfg, "core.empty", True) is False       # "key =" is false in git


def test_read_config(tmp_path: Path) -> None:
    assert read_config(str(tmp_path), {"GIT_CONFIG_NOSYSTEM": "1"}) == {}
    assert read_config(str(tmp_path)) == {}         # the tests' environment: no user config
    (tmp_path / "config").write_text("[reftable]\n\tblockSize = 8k\n")
    cfg = read_config(str(tmp_path))
    assert cfg == {"reftable.blocksize": "8k"}
    assert config_int(cfg, "reftable.blocksize", 4096) == 8192


@pytest.mark.parametrize("value,expect", BOOLS.items())
def test_parse_bool_is_gits_rule(value: str, expect: bool | None) -> None:
    assert parse_bool(value) is expect


@pytest.mark.parametrize("value,expect", INTS.items())
def test_parse_int_is_gits_rule(value: str, expect: int | str) -> None:
    if isinstance(expect, str):
        with pytest.raises(ValueError, match=expect):
            parse_int(value)
    else:
        assert parse_int(value) == expect


def test_config_bool_and_int_defaults_and_errors() -> None:
    cfg = {"a.t": "2", "a.f": "off", "a.bad": "maybe", "a.n": "16k", "a.nbad": "16q"}
    assert config_bool(cfg, "a.t", False) is True
    assert config_bool(cfg, "a.f", True) is False
    assert config_bool(cfg, "a.unset", True) is True
    assert config_bool(cfg, "a.unset", False) is False
    with pytest.raises(ConfigError, match=r"^bad boolean config value 'maybe' for 'a\.bad'$"):
        config_bool(cfg, "a.bad", True)
    assert config_int(cfg, "a.n", 0) == 16384
    assert config_int(cfg, "a.unset", 7) == 7
    with pytest.raises(ConfigError,
                       match=r"^bad numeric config value '16q' for 'a\.nbad': invalid unit$"):
        config_int(cfg, "a.nbad", 0)
    assert issubclass(ConfigError, ReftableError)


def test_bool_rule_agrees_with_git(git) -> None:
    """The provisioned git decides every value of the table the same way."""
    for value, expect in BOOLS.items():
        p = git.run(["-c", f"x.y={value}", "config", "--type=bool", "x.y"], check=False)
        got = None if p.returncode else {b"true\n": True, b"false\n": False}[p.stdout]
        assert got is expect, value
