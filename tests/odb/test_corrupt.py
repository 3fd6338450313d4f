"""odb on bad input: a clear FormatError (file and offset), never a hang or a bare error."""
from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest
from reftable_core.errors import FormatError, ReftableError, ZlibError
from reftable_core.flags import Flags
from reftable_core.odb import PackIndex, open_object_store
from reftable_core.odb.delta import encode_size, make_delta
from reftable_core.odb.loose import decode_loose

from tests.helpers.odb import git_oid, write_pack

BASE = b"hello world, this is the base object\n" * 3


def objdir(tmp_path: Path) -> Path:
    d = tmp_path / "objects"
    (d / "pack").mkdir(parents=True)
    return d


def oid(n: int) -> bytes:
    return bytes([n]) * 20


def test_good_handmade_pack_reads(tmp_path: Path) -> None:
    d = objdir(tmp_path)
    target = BASE.replace(b"world", b"there", 1)
    delta = make_delta(BASE, target, [("copy", 0, 6), ("insert", b"there"), ("copy", 11, len(BASE) - 11)])
    b_id, t_id = git_oid("blob", BASE), git_oid("blob", target)
    t2 = target + b"more\n"
    t2_id = git_oid("blob", t2)
    write_pack(d / "pack", [(b_id, 3, BASE, None), (t_id, 6, delta, 0),
                            (t2_id, 7, make_delta(target, t2, [("copy", 0, len(target)), ("insert", b"more\n")]), t_id)])
    with open_object_store(d, "sha1") as s:
        assert s.read(t_id) == ("blob", target)
        assert s.read(t2_id) == ("blob", t2)
        assert s.read_header(t2_id) == ("blob", len(t2))


def test_truncated_pack(tmp_path: Path) -> None:
    d = objdir(tmp_path)
    pp, _, _ = write_pack(d / "pack", [(oid(1), 3, BASE * 50, None)])
    data = pp.read_bytes()
    for cut in (len(data) - 30, 40, 12, 5):
        pp.write_bytes(data[:cut])
        with pytest.raises(FormatError) as e:
            open_object_store(d, "sha1")
        assert "pack-test.pack" in str(e.value)


def test_truncated_zlib_stream_inside_consistent_pack(tmp_path: Path) -> None:
    d = objdir(tmp_path)
    z = zlib.compress(BASE * 20)
    write_pack(d / "pack", [(oid(1), 3, BASE * 20, None, z[:len(z) // 2])])
    with open_object_store(d, "sha1") as s, pytest.raises(FormatError, match="zlib|size"):
        s.read(oid(1))


def test_garbage_zlib_and_wrong_size(tmp_path: Path) -> None:
    d = objdir(tmp_path)
    write_pack(d / "pack", [(oid(1), 3, BASE, None, b"\x00garbage-not-zlib" * 3),
                            (oid(2), 3, BASE + b"x", None, zlib.compress(BASE))])
    with open_object_store(d, "sha1") as s:
        with pytest.raises(ZlibError):
            s.read(oid(1))
        with pytest.raises(FormatError, match="size"):
            s.read(oid(2))


@pytest.mark.parametrize("delta,msg", [
    (encode_size(len(BASE)) + encode_size(50) + bytes([0x91, 100, 50]), "copy past"),
    (encode_size(len(BASE) + 1) + encode_size(3) + bytes([3]) + b"abc", "base size"),
    (encode_size(len(BASE)) + encode_size(9) + bytes([3]) + b"abc", "result size"),
])
@pytest.mark.parametrize("kind", [6, 7])
def test_bad_delta_in_pack(tmp_path: Path, delta: bytes, msg: str, kind: int) -> None:
    d = objdir(tmp_path)
    base_ref = 0 if kind == 6 else oid(1)
    write_pack(d / "pack", [(oid(1), 3, BASE, None), (oid(2), kind, delta, base_ref)])
    with open_object_store(d, "sha1") as s, pytest.raises(FormatError, match=msg) as e:
        s.read(oid(2))
    assert e.value.path and e.value.path.endswith(".pack") and e.value.offset is not None


def test_ref_delta_loop(tmp_path: Path) -> None:
    d = objdir(tmp_path)
    dl = encode_size(3) + encode_size(3) + bytes([3]) + b"abc"
    write_pack(d / "pack", [(oid(1), 7, dl, oid(2)), (oid(2), 7, dl, oid(3)), (oid(3), 7, dl, oid(1))])
    for flags in (Flags(), Flags(delta_cache_index="fixed:1", delta_cache_limit=0)):
        with open_object_store(d, "sha1", flags) as s:
            for o in (oid(1), oid(2), oid(3)):
                with pytest.raises(FormatError, match="loop"):
                    s.read(o)
                with pytest.raises(FormatError, match="loop"):
                    s.read_header(o)


def test_self_referencing_ofs_delta(tmp_path: Path) -> None:
    d = objdir(tmp_path)
    # hand-patch: an OFS_DELTA whose base offset is itself (ofs 0) -> error
    dl = encode_size(3) + encode_size(3) + bytes([3]) + b"abc"
    write_pack(d / "pack", [(oid(1), 6, dl, 0)])
    with open_object_store(d, "sha1") as s, pytest.raises(FormatError, match="OFS_DELTA"):
        s.read(oid(1))


def test_ref_delta_base_missing(tmp_path: Path) -> None:
    d = objdir(tmp_path)
    dl = encode_size(3) + encode_size(3) + bytes([3]) + b"abc"
    write_pack(d / "pack", [(oid(1), 7, dl, oid(9))])
    with open_object_store(d, "sha1") as s, pytest.raises(FormatError, match="not in this pack"):
        s.read(oid(1))


def test_bad_object_type(tmp_path: Path) -> None:
    d = objdir(tmp_path)
    write_pack(d / "pack", [(oid(1), 5, BASE, None)])
    with open_object_store(d, "sha1") as s, pytest.raises(FormatError, match="type"):
        s.read(oid(1))


def _idx_bytes(tmp_path: Path) -> bytes:
    d = objdir(tmp_path)
    _, ip, _ = write_pack(d / "pack", [(oid(n), 3, BASE + bytes([n]), None) for n in (1, 5, 200)])
    return ip.read_bytes()


def test_idx_fanout_not_monotonic(tmp_path: Path) -> None:
    raw = bytearray(_idx_bytes(tmp_path))
    PackIndex(bytes(raw))
    struct.pack_into(">I", raw, 8 + 4 * 100, 0)      # entries 5..99 say 2, entry 100 says 0
    with pytest.raises(FormatError, match="monotonic") as e:
        PackIndex(bytes(raw), 20, "x.idx")
    assert e.value.offset == 8 + 4 * 100 and e.value.path == "x.idx"
    ip = next((tmp_path / "objects" / "pack").glob("*.idx"))
    ip.write_bytes(bytes(raw))
    with pytest.raises(FormatError, match="monotonic"):
        open_object_store(tmp_path / "objects", "sha1")


@pytest.mark.parametrize("cut", [0, 7, 500, 1100, -41, -1])
def test_idx_truncated(tmp_path: Path, cut: int) -> None:
    raw = _idx_bytes(tmp_path)
    with pytest.raises(FormatError):
        PackIndex(raw[:cut], 20, "x.idx")


def test_idx_offset_outside_pack(tmp_path: Path) -> None:
    d = objdir(tmp_path)
    _, ip, _ = write_pack(d / "pack", [(oid(1), 3, BASE, None)])
    raw = bytearray(ip.read_bytes())
    struct.pack_into(">I", raw, 8 + 1024 + 20 + 4, 10**6)
    ip.write_bytes(bytes(raw))
    with open_object_store(d, "sha1") as s, pytest.raises(FormatError, match="outside"):
        s.read(oid(1))


@pytest.mark.parametrize("raw", [b"", b"junk", zlib.compress(b"blob 5\0abc"),
                                 zlib.compress(b"blub 3\0abc"), zlib.compress(b"blob 3abc"),
                                 zlib.compress(b"blob 3\0abc")[:-3]])
def test_bad_loose(raw: bytes) -> None:
    with pytest.raises(ReftableError):
        decode_loose(raw, "obj")


def test_random_corruption_never_escapes(tmp_path: Path) -> None:
    """Flip bytes all over a small delta pack: every read either succeeds or raises
    a ReftableError."""
    import random
    d = objdir(tmp_path)
    target = BASE.replace(b"world", b"there", 1)
    delta = make_delta(BASE, target, [("copy", 0, 6), ("insert", b"there"), ("copy", 11, len(BASE) - 11)])
    pp, _, _ = write_pack(d / "pack", [(oid(1), 3, BASE, None), (oid(2), 6, delta, 0),
                                        (oid(3), 7, delta, oid(1))])
    good = pp.read_bytes()
    rng = random.Random(1)
    for _ in range(150):
        bad = bytearray(good)
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(12, len(good) - 20)     # keep header and trailer (checked on open)
            bad[i] = rng.randrange(256)
        pp.write_bytes(bytes(bad))
        with open_object_store(d, "sha1", Flags(delta_cache_limit=0)) as s:
            for o in (oid(1), oid(2), oid(3)):
                try:
                    s.read(o)
                    s.read_header(o)
                except ReftableError:
                    pass
