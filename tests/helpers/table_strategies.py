"""Hypothesis strategies for reftable records and tables (shared by the table tests)."""
from __future__ import annotations

from hypothesis import strategies as st
from reftable_core.reftable.record import IndexRecord, LogRecord, ObjRecord, RefRecord

HASH_SIZES = {"sha1": 20, "sha256": 32}

_component = st.text(alphabet="abcdefghij-_.0123456789ÄéΩ", min_size=1, max_size=8)
refnames = st.one_of(
    st.lists(_component, min_size=1, max_size=4).map(
        lambda parts: ("refs/" + "/".join(parts)).encode()),
    st.sampled_from([b"HEAD", b"FETCH_HEAD", b"refs/heads/main", b"refs/heads/main/x",
                     b"refs/tags/v1.0", b"refs/heads/ma"]),
    st.binary(min_size=1, max_size=30).filter(lambda b: b"\0" not in b),
)


def oids(hash_size: int) -> st.SearchStrategy[bytes]:
    # a small alphabet makes shared prefixes (and obj_id_len > 2) likely
    return st.one_of(st.binary(min_size=hash_size, max_size=hash_size),
                     st.lists(st.sampled_from([0, 1, 0xAB]), min_size=hash_size,
                              max_size=hash_size).map(bytes))


@st.composite
def ref_records(draw, hash_size: int = 20, refname=refnames,
                update_index=st.integers(0, 1000)) -> RefRecord:
    name = draw(refname)
    ui = draw(update_index)
    vt = draw(st.integers(0, 3))
    if vt == 0:
        return RefRecord(name, ui, 0)
    if vt == 1:
        return RefRecord(name, ui, 1, draw(oids(hash_size)))
    if vt == 2:
        return RefRecord(name, ui, 2, draw(oids(hash_size)), draw(oids(hash_size)))
    return RefRecord(name, ui, 3, target=draw(refnames))


@st.composite
def log_records(draw, hash_size: int = 20, refname=refnames,
                update_index=st.integers(0, 1000)) -> LogRecord:
    name = draw(refname)
    ui = draw(update_index)
    if draw(st.integers(0, 9)) == 0:
        return LogRecord(name, ui, 0)
    return LogRecord(name, ui, 1, draw(oids(hash_size)), draw(oids(hash_size)),
                     draw(st.text(max_size=12)).encode(),
                     draw(st.text(max_size=12)).encode(),
                     draw(st.integers(0, (1 << 40))), draw(st.integers(-32768, 32767)),
                     draw(st.text(max_size=30).map(lambda s: s.replace("\n", " "))).encode()
                     + b"\n")


obj_records = st.builds(
    ObjRecord, st.binary(min_size=2, max_size=31),
    st.lists(st.integers(0, 1 << 40), max_size=12).map(sorted))
index_records = st.builds(IndexRecord, refnames, st.integers(0, (1 << 64) - 1))


def unique_sorted_refs(recs: list[RefRecord]) -> list[RefRecord]:
    seen: dict[bytes, RefRecord] = {}
    for r in recs:
        seen.setdefault(r.refname, r)
    return [seen[k] for k in sorted(seen)]


def unique_sorted_logs(recs: list[LogRecord]) -> list[LogRecord]:
    seen: dict[bytes, LogRecord] = {}
    for r in recs:
        seen.setdefault(r.key(), r)
    return [seen[k] for k in sorted(seen)]


# the machine is shared: no deadlines, no "too slow" health checks
from hypothesis import HealthCheck, settings

relaxed = settings(deadline=None, suppress_health_check=list(HealthCheck))
