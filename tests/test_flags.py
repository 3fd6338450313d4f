"""Every combination of the 9 reftable flags (2^9) gives identical results, each with
one of the 16 combinations of the 4 decoding flags (decode_key_in_place,
restart_key_in_place, next_block_in_place, seek_in_place) in turn, and so does every
value of the 4 ref store flags (tombstone_suppression, iterator_reuse,
initial_transaction_check, skip_name_check: the library's check of an added table,
which writes reach) and of the 2 writer flags (writer_scratch, block_writer_scratch:
the tables they write are byte for byte the same).

On the same stacks (several tables, shadowing updates and deletions, small blocks
so tables have indexes): ref and log iteration, seeks, exact reads, show-ref
output, and the result of update-ref transactions; the ref store's reads (one ref,
prefix and log iteration, reflog_exists, the D/F check) over a stack of tombstones
for the store flags with a sample of the others; `refs migrate` both ways (the
initial transaction). Also flag parsing and the env var / CLI rule.
"""
from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pytest
from tests.helpers.labrun import run_lab
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reftable_core.errors import APIError
from reftable_core.flags import (BOOL_FLAGS, ENV_VAR, FLAG_INFO, Flags, baseline, format_value,
                                 resolve)
from reftable_core.reftable.record import LogRecord, RefRecord
from reftable_core.refs.api import Ref, RefUpdate
from reftable_core.refs.migrate import MigrateOptions, migrate_ref_storage
from reftable_core.repo import open_repo
from reftable_core.reftable.stack import Stack, StackOptions

REFTABLE_FLAGS = ("merged_cmp", "same_subiter_skip", "pq_cmp", "single_subiter_bypass",
                  "block_key_swap",
                  "ref_name_alloc", "block_type_early_exit", "stat_cache", "mmap")
# the decoding series' flags (upstream 2024-03/04): combination i of the 9 above runs
# with decoding combination (i + i // 16) % 16, so each of the 16 meets 32 combinations
# of the others, every value of each of them among those
DECODE_FLAGS = ("decode_key_in_place", "restart_key_in_place", "next_block_in_place",
                "seek_in_place")
DECODE_COMBOS = [dict(zip(DECODE_FLAGS, bits))
                 for bits in itertools.product((False, True), repeat=len(DECODE_FLAGS))]
ALL_COMBOS = [Flags(**dict(zip(REFTABLE_FLAGS, bits)), **DECODE_COMBOS[(i + i // 16) % 16])
              for i, bits in enumerate(itertools.product((False, True),
                                                         repeat=len(REFTABLE_FLAGS)))]
# the flags of the ref stores (refs/reftable_backend.py, the initial transaction of
# both backends): the stack-level reads above never reach them, the commands, store
# reads and migrations below do
STORE_FLAGS = ("tombstone_suppression", "iterator_reuse", "initial_transaction_check",
               "skip_name_check")
STORE_COMBOS = [dict(zip(STORE_FLAGS, bits))
                for bits in itertools.product((False, True), repeat=len(STORE_FLAGS))]
# the table writer's flags (upstream 2024-11): every write below (the stack's tables,
# transactions, migrations) runs under each of their combinations
WRITER_FLAGS = ("writer_scratch", "block_writer_scratch")
WRITER_COMBOS = [dict(zip(WRITER_FLAGS, bits))
                 for bits in itertools.product((False, True), repeat=len(WRITER_FLAGS))]
SEEKS = [b"", b"refs/heads/b05", b"refs/heads/b050", b"refs/tags/", b"refs/zzz", b"HEAD"]


def _oid(i: int) -> bytes:
    return i.to_bytes(4, "big") * 5


LAYERS = [
    [(b"refs/heads/b%03d" % i, _oid(i)) for i in range(200)],
    [(b"refs/heads/b%03d" % i, _oid(i + 1000)) for i in range(0, 200, 7)],
    [(b"refs/heads/b%03d" % i, None) for i in range(3, 200, 11)],
    [(b"refs/tags/t%02d" % i, _oid(i + 2000)) for i in range(30)],
    [(b"refs/heads/b%03d" % i, _oid(i + 3000)) for i in range(5, 200, 13)],
    [(b"HEAD", b"refs/heads/b001")],
]


def _write_stack(d: Path, flags: Flags) -> list[bytes]:
    """LAYERS written as six tables of a new stack at d under flags; their bytes."""
    stk = Stack(d, flags, StackOptions(auto_compact=False, block_size=256))
    for layer in LAYERS:
        ui = stk.next_update_index()

        def write(wr, layer=layer, ui=ui) -> None:
            for name, v in sorted(layer, key=lambda t: t[0]):
                if name == b"HEAD":
                    wr.add_ref(RefRecord(name, ui, 3, target=v))
                elif v is None:
                    wr.add_ref(RefRecord(name, ui, 0))
                else:
                    wr.add_ref(RefRecord(name, ui, 1, v))
            for name, v in sorted(layer, key=lambda t: t[0]):
                if name != b"HEAD":
                    wr.add_log(LogRecord(name, ui, 1, bytes(20), v or bytes(20), b"N", b"e@x",
                                         1700000000 + ui, 60, b"layer %d" % ui))
        stk.add(write)
    assert len(stk.names) == 6
    tables = [(d / name).read_bytes() for name in stk.names]
    stk.close()
    return tables


@pytest.fixture(scope="module")
def stack_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("flags") / "reftable"
    _write_stack(d, Flags())
    return d


def test_every_writer_combination_writes_the_same_tables(stack_dir: Path,
                                                         tmp_path: Path) -> None:
    stk = Stack(stack_dir, Flags(), StackOptions(auto_compact=False, block_size=256))
    want = [(stack_dir / name).read_bytes() for name in stk.names]
    stk.close()
    for i, (base, combo) in enumerate(itertools.product(
            (Flags(), baseline(), *ALL_COMBOS[::97]), WRITER_COMBOS)):
        assert _write_stack(tmp_path / f"s{i}", base.replace(**combo)) == want, \
            base.replace(**combo).to_spec(Flags())


def _observe(d: Path, flags: Flags) -> tuple:
    stk = Stack(d, flags, StackOptions(auto_compact=False, block_size=256))
    try:
        mt = stk.merged
        refs = [(r.refname, r.value_type, r.value, r.target) for r in mt.refs()]
        logs = [(r.refname, r.update_index, r.new_id, r.message) for r in mt.logs()]
        seeks = []
        for key in SEEKS:
            it = mt.refs()
            it.seek(key)
            seeks.append([r.refname for r in itertools.islice(it, 5)])
        reads = [mt.read_ref(n) for n in (b"HEAD", b"refs/heads/b003", b"refs/heads/b007",
                                          b"refs/heads/b199", b"refs/tags/t29", b"refs/x")]
        reads = [None if r is None else (r.refname, r.value) for r in reads]
        logs_of = [[r.update_index for r in mt.iter_logs(b"refs/heads/b%03d" % i)]
                   for i in (0, 5, 7, 65)]
        return refs, logs, seeks, reads, logs_of
    finally:
        stk.close()


def test_all_combinations_read_the_same(stack_dir: Path) -> None:
    want = _observe(stack_dir, Flags())
    live = set(range(200)) - set(range(3, 200, 11)) | set(range(5, 200, 13))
    assert len(want[0]) == len(live) + 30 + 1
    for flags in ALL_COMBOS:
        assert _observe(stack_dir, flags) == want, flags.to_spec(Flags())


@pytest.fixture(scope="module")
def git_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from gitbin import GitRunner, find_git, hermetic_env
    tmp = tmp_path_factory.mktemp("flagsrepo")
    git = GitRunner(find_git(), hermetic_env(tmp))
    path = tmp / "repo"
    env = {"GIT_TEST_REFTABLE_AUTOCOMPACTION": "false"}
    git.run(["init", "-q", "--ref-format=reftable", "-b", "main", str(path)])
    git.run(["commit", "-q", "--allow-empty", "-m", "one"], cwd=path, env=env)
    git.run(["tag", "-a", "-m", "t", "v1"], cwd=path, env=env)
    script = b"".join(b"create refs/heads/br%03d HEAD\n" % i for i in range(150))
    git.run(["update-ref", "--stdin"], cwd=path, input=script, env=env)
    for i in range(0, 150, 9):
        git.run(["branch", "-D", "br%03d" % i], cwd=path, env=env)
    git.run(["branch", "zz"], cwd=path, env=env)
    return path


SHOW_REF_ARGS = [["--head", "-d"], ["br100"], ["--verify", "refs/heads/br009"], ["--tags", "-d"]]


# The read path above is checked for all 512 combinations; the whole commands
# (process set-up, odb, output) are a property over the combinations (the store
# flags included): default, baseline and a hypothesis sample of the rest.
combo = st.builds(lambda f, store, writer: f.replace(**store, **writer),
                  st.sampled_from(ALL_COMBOS), st.sampled_from(STORE_COMBOS),
                  st.sampled_from(WRITER_COMBOS))


def _store_reads(git_repo: Path, flags: Flags) -> tuple:
    """What the reftable ref store reads over git_repo's tombstones (branches deleted
    by git: ref and reflog tombstones), a D/F check included (prepare, then abort)."""
    repo = open_repo(git_repo, flags)
    try:
        s = repo.refs
        refs = [(r.name, r.value, r.target) for r in s.iter_refs()]
        under = [r.name for r in s.iter_refs(b"refs/heads/br00")]
        reads = [s.read_ref(n) for n in (b"refs/heads/br000", b"refs/heads/br001",
                                         b"refs/heads/br009", b"refs/heads/br1", b"HEAD")]
        logs = [[(e.update_index, e.message) for e in s.iter_log(n)]
                for n in (b"refs/heads/br009", b"refs/heads/br010", b"HEAD")]
        exists = [s.reflog_exists(n) for n in (b"refs/heads/br009", b"refs/heads/br010")]
        errors = []
        for name in (b"refs/heads/br009/x", b"refs/heads/br010/x", b"refs/heads/br01"):
            tx = s.transaction()
            tx.queue(RefUpdate(name, new_value=refs[0][1], old_value=bytes(20),
                               flags={"create"}))
            try:
                tx.prepare()
                errors.append(None)
            except Exception as e:           # git's D/F message
                errors.append(str(e))
            tx.abort()
        return refs, under, reads, logs, exists, errors
    finally:
        repo.close()


def test_store_reads_the_same_for_every_store_flag(git_repo: Path) -> None:
    want = _store_reads(git_repo, Flags())
    assert want[2][0] is None and want[2][1] is not None and want[4] == [False, True]
    assert want[5][0] is None and "exists; cannot create" in want[5][1]
    for i, store in enumerate(STORE_COMBOS):
        for flags in (Flags(), baseline(), *ALL_COMBOS[i * 37 % 512::128]):
            got = _store_reads(git_repo, flags.replace(**store))
            assert got == want, flags.replace(**store).to_spec(Flags())


@pytest.fixture(scope="module")
def show_ref_want(git_repo: Path) -> list:
    want = [run_lab(["show-ref", *a], cwd=git_repo) for a in SHOW_REF_ARGS]
    assert want[0][0] == 0 and want[1][1].endswith(b" refs/heads/br100\n")
    return want


def _show_ref_all(git_repo: Path, flags: Flags) -> list:
    spec = flags.to_spec(Flags()) or "default"
    return [run_lab(["show-ref", "--flags", spec, *a], cwd=git_repo) for a in SHOW_REF_ARGS]


def test_show_ref_same_default_and_baseline(git_repo: Path, show_ref_want: list) -> None:
    assert _show_ref_all(git_repo, baseline()) == show_ref_want


@settings(max_examples=24, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flags=combo)
def test_show_ref_same_for_any_combination(git_repo: Path, show_ref_want: list,
                                           flags: Flags) -> None:
    assert _show_ref_all(git_repo, flags) == show_ref_want


def _transact(path: Path, flags: Flags, tip: bytes) -> tuple:
    repo = open_repo(path, flags)
    try:
        tx = repo.refs.transaction()
        for i in range(0, 40, 3):
            tx.queue(RefUpdate(b"refs/heads/new%02d" % i, new_value=tip, old_value=bytes(20),
                               flags={"create"}))
        tx.queue(RefUpdate(b"refs/heads/br001", new_value=bytes(20), flags={"delete"}))
        tx.commit()
        refs = [(r.name, r.value, r.target) for r in repo.refs.iter_refs()]
        logs = [(e.refname, e.new_id, e.message) for e in repo.refs.iter_log(b"refs/heads/new03")]
        return refs, logs, repo.refs.read_ref(b"refs/heads/br001")
    finally:
        repo.close()


@pytest.fixture(scope="module")
def update_ref_want(git_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple:
    return _transact_copy(git_repo, tmp_path_factory.mktemp("want"), Flags())


def _transact_copy(git_repo: Path, tmp: Path, flags: Flags) -> tuple:
    repo = open_repo(git_repo)
    tip = repo.refs.resolve(b"HEAD").value
    repo.close()
    copy = tmp / "copy"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(git_repo, copy)
    try:
        return _transact(copy, flags, tip)
    finally:
        shutil.rmtree(copy)


def test_update_ref_same_baseline(git_repo: Path, tmp_path: Path, update_ref_want: tuple) -> None:
    assert _transact_copy(git_repo, tmp_path, baseline()) == update_ref_want
    assert update_ref_want[2] is None and len(update_ref_want[1]) == 1


@settings(max_examples=16, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flags=combo)
def test_update_ref_same_for_any_combination(git_repo: Path, tmp_path: Path,
                                             update_ref_want: tuple, flags: Flags) -> None:
    assert _transact_copy(git_repo, tmp_path, flags) == update_ref_want


@pytest.fixture(scope="module")
def bare_files_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bare files repository made by git (no reflogs): branches loose and packed,
    an annotated tag, a symref, a root ref, refs two levels down."""
    from gitbin import GitRunner, find_git, hermetic_env
    tmp = tmp_path_factory.mktemp("migflags")
    git = GitRunner(find_git(), hermetic_env(tmp))
    work, path = tmp / "work", tmp / "repo.git"
    git.run(["init", "-q", "-b", "main", str(work)])
    git.run(["commit", "-q", "--allow-empty", "-m", "one"], cwd=work)
    git.run(["clone", "-q", "--bare", str(work), str(path)])
    git.run(["tag", "-a", "-m", "t", "v1", "main"], cwd=path)
    script = b"".join(b"create refs/heads/br%03d main\n" % i for i in range(60))
    git.run(["update-ref", "--stdin"], cwd=path, input=script)
    git.run(["pack-refs", "--all"], cwd=path)
    script = b"".join(b"create refs/remotes/o/f%02d/x main\n" % i for i in range(20))
    git.run(["update-ref", "--stdin"], cwd=path, input=script)
    git.run(["symbolic-ref", "refs/heads/cur", "refs/heads/br007"], cwd=path)
    git.run(["update-ref", "ORIG_HEAD", "main"], cwd=path)
    return path


def _seen(ref: Ref | None) -> tuple | None:
    return None if ref is None else (ref.name, ref.value, ref.target)


def _migrate_round_trip(src: Path, tmp: Path, flags: Flags) -> list:
    """The refs (HEAD, ORIG_HEAD, every one under refs/) after migrating a copy of
    src to reftable, then after migrating it back to files."""
    copy = tmp / "mig.git"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(src, copy)
    seen = []
    try:
        for fmt in ("reftable", "files"):
            repo = open_repo(copy, flags)
            migrate_ref_storage(repo.commondir, repo.refs, repo.ref_storage, fmt, MigrateOptions(
                flags=flags, object_format=repo.object_format, config=repo.config,
                objects=lambda repo=repo: repo.objects))
            repo.close()
            repo = open_repo(copy, flags)
            # name, value and target: a ref's peeled value is a cache of the packed-refs
            # file, which migrate_initial=off (every ref loose, as git 2.47) does not write
            seen.append((repo.ref_storage,
                         [_seen(repo.refs.read_ref(n)) for n in (b"HEAD", b"ORIG_HEAD")],
                         [_seen(r) for r in repo.refs.iter_refs()]))
            repo.close()
        return seen
    finally:
        shutil.rmtree(copy)


@pytest.fixture(scope="module")
def migrate_want(bare_files_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> list:
    want = _migrate_round_trip(bare_files_repo, tmp_path_factory.mktemp("mwant"), Flags())
    assert [w[0] for w in want] == ["reftable", "files"] and len(want[0][2]) == 83
    assert want[0][1:] == want[1][1:]            # the same refs in both formats
    return want


def test_migrate_same_baseline(bare_files_repo: Path, tmp_path: Path,
                               migrate_want: list) -> None:
    assert _migrate_round_trip(bare_files_repo, tmp_path, baseline()) == migrate_want


@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flags=combo)
def test_migrate_same_for_any_combination(bare_files_repo: Path, tmp_path: Path,
                                          migrate_want: list, flags: Flags) -> None:
    assert _migrate_round_trip(bare_files_repo, tmp_path, flags) == migrate_want


# -- parsing and the CLI rule --------------------------------------------------------

def test_parse_and_roundtrip() -> None:
    f = Flags.parse("mmap=off,pq_cmp=off")
    assert not f.mmap and not f.pq_cmp and f.stat_cache
    assert Flags.parse(f.to_spec()) == f
    assert Flags.parse("baseline") == baseline()
    assert Flags.parse("baseline,mmap=on") == baseline().replace(mmap=True)
    for bad in ("mmap", "mmap=maybe", "nosuch=on"):
        with pytest.raises(APIError):
            Flags.parse(bad)
    assert set(REFTABLE_FLAGS) <= set(BOOL_FLAGS)


def test_env_then_cli_rule() -> None:
    env = {ENV_VAR: "mmap=off,stat_cache=off"}
    assert resolve(None, False, env) == Flags(mmap=False, stat_cache=False)
    assert resolve("mmap=on", False, env) == Flags(stat_cache=False)
    assert resolve(None, True, env) == baseline()
    assert resolve("pq_cmp=on", True, {}) == baseline().replace(pq_cmp=True)


def test_cli_flags_reach_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    def current(args: list[str]) -> dict[str, str]:
        status, out, _ = run_lab(["flags", *args])
        assert status == 0
        rows = {}
        for line in out.decode().splitlines()[1:]:
            parts = line.split()
            if len(parts) >= 5 and parts[0] in REFTABLE_FLAGS:
                rows[parts[0]] = parts[4]
        return rows
    assert current([])["mmap"] == "on"
    assert current(["--baseline"])["pq_cmp"] == "off"
    monkeypatch.setenv(ENV_VAR, "mmap=off")
    assert current([])["mmap"] == "off"
    assert current(["--flags", "mmap=on"])["mmap"] == "on"


def test_baseline_turns_every_optimization_off() -> None:
    """baseline() names every flag: each on|off flag is off and differs from Flags()."""
    import dataclasses
    base, default = baseline(), Flags()
    for f in dataclasses.fields(Flags):
        if f.name in BOOL_FLAGS:
            assert getattr(base, f.name) is False, f.name
            assert getattr(default, f.name) is True, f.name
        elif f.name != "delta_cache_limit":
            assert getattr(base, f.name) != getattr(default, f.name), f.name


def test_flag_metadata_lives_on_the_fields() -> None:
    """One list: FLAG_INFO, baseline() and the parsers all come from the field metadata."""
    import dataclasses
    fields = dataclasses.fields(Flags)
    assert list(FLAG_INFO) == [f.name for f in fields]
    base = baseline()
    for f in fields:
        info = FLAG_INFO[f.name]
        about = f.metadata["about"]
        assert (info.values, info.off, info.on, info.seed, info.layer) == tuple(
            getattr(about, k) for k in ("values", "off", "on", "seed", "layer")), f.name
        assert getattr(base, f.name) == f.metadata["before"], f.name
        text = format_value(getattr(Flags(), f.name))
        assert Flags.parse(f"{f.name}={text}") == Flags(), f.name
