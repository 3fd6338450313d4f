"""odb on hostile sizes: declared sizes are checked against a limit and against the
header before anything is allocated, every inflate stops at the declared size, and
delta headers are read however many compressed bytes they span. The size bombs run
in a subprocess under RLIMIT_AS, so a balloon fails the test instead of the machine."""
from __future__ import annotations

import hashlib
import json
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from reftable_core.errors import FormatError
from reftable_core.odb import open_object_store
from reftable_core.odb.delta import encode_size, make_delta
from reftable_core.odb.loose import decode_loose

from tests.helpers.odb import git_oid, obj_header, write_pack

BASE = bytes(range(256)) * 256          # 64 KiB: one 0x80 copy instruction copies all of it
GIB = 1 << 30


def objdir(tmp_path: Path) -> Path:
    d = tmp_path / "objects"
    (d / "pack").mkdir(parents=True)
    return d


def oid(n: int) -> bytes:
    return bytes([n]) * 20


def zeros_stream(prefix: bytes, mib: int) -> bytes:
    """A valid zlib stream of prefix + mib MiB of zero bytes, built without
    compressing them all: full-flushed blocks of one MiB repeat byte for byte."""
    chunk = bytes(1 << 20)
    c = zlib.compressobj(9)
    first = c.compress(prefix + chunk) + c.flush(zlib.Z_FULL_FLUSH)
    block = c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH)
    assert block == c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH)
    adler = zlib.adler32(prefix)
    for _ in range(mib):
        adler = zlib.adler32(chunk, adler)
    return first + block * (mib - 1) + b"\x03\x00" + adler.to_bytes(4, "big")


def slow_header_stream(data: bytes, empty_blocks: int) -> bytes:
    """A valid zlib stream of data that opens with empty stored blocks, so its first
    2 + 5 * empty_blocks compressed bytes inflate to nothing."""
    z = zlib.compress(data)
    return z[:2] + b"\x00\x00\x00\xff\xff" * empty_blocks + z[2:]


def run_bounded(objects: Path, oids: list[bytes], extra_mb: int = 300,
                max_object_size: int | None = None) -> list[str]:
    """read and read_header each oid in a child limited to its start size + extra_mb of
    address space; one line per call: 'ok <type> <size>' or '<ErrorClass>: <message>'."""
    code = f"""
import json, resource, sys
from reftable_core.odb import open_object_store
vm = int(open("/proc/self/status").read().split("VmSize:")[1].split()[0]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (vm + ({extra_mb} << 20), resource.RLIM_INFINITY))
kw = {{}} if {max_object_size!r} is None else {{"max_object_size": {max_object_size!r}}}
out = []
with open_object_store({str(objects)!r}, "sha1", **kw) as s:
    for h in {[o.hex() for o in oids]!r}:
        for call in (s.read_header, s.read):
            try:
                t, v = call(bytes.fromhex(h))
                out.append(f"ok {{t}} {{v if isinstance(v, int) else len(v)}}")
            except Exception as e:
                out.append(f"{{type(e).__name__}}: {{e}}")
print(json.dumps(out))
"""
    proc = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


# -- delta headers that span many compressed bytes (issue 11, part 1) -----------------
@pytest.mark.parametrize("kind", [6, 7])
@pytest.mark.parametrize("empty_blocks", [0, 13, 40, 3000])
def test_read_header_long_zlib_header(tmp_path: Path, kind: int, empty_blocks: int) -> None:
    d = objdir(tmp_path)
    target = BASE[:1000] + b"changed" + BASE[1000:]
    delta = make_delta(BASE, target, [("copy", 0, 1000), ("insert", b"changed"),
                                      ("copy", 1000, len(BASE) - 1000)])
    b_id, t_id = git_oid("blob", BASE), git_oid("blob", target)
    base_ref = 0 if kind == 6 else b_id
    write_pack(d / "pack", [(b_id, 3, BASE, None),
                            (t_id, kind, delta, base_ref, slow_header_stream(delta, empty_blocks))])
    with open_object_store(d, "sha1") as s:
        assert s.read_header(t_id) == ("blob", len(target))
        assert s.read(t_id) == ("blob", target)


def test_read_header_delta_too_short_for_its_sizes(tmp_path: Path) -> None:
    d = objdir(tmp_path)
    for delta in (b"", b"\x84", encode_size(len(BASE)), encode_size(len(BASE)) + b"\xff\xff"):
        write_pack(d / "pack", [(oid(1), 3, BASE, None),
                                (oid(2), 6, delta, 0, slow_header_stream(delta, 30))])
        with open_object_store(d, "sha1") as s, pytest.raises(FormatError, match="delta") as e:
            s.read_header(oid(2))
        assert e.value.path and e.value.path.endswith(".pack") and e.value.offset


# -- size bombs (part 2) ---------------------------------------------------------------
def test_delta_declaring_4gib_from_a_tiny_pack(tmp_path: Path) -> None:
    d = objdir(tmp_path)
    n = 1 << 16                                         # 65536 copies of 64 KiB = 4 GiB
    delta = encode_size(len(BASE)) + encode_size(n * len(BASE)) + b"\x80" * n
    pp, _, offsets = write_pack(d / "pack", [(oid(1), 3, BASE, None), (oid(2), 6, delta, 0)])
    assert pp.stat().st_size < 70_000
    header, data = run_bounded(d, [oid(2)])[:2]
    assert header == f"ok blob {4 * GIB}"               # read_header allocates nothing
    assert data.startswith("FormatError: ") and "limit" in data
    assert f"pack-test.pack at offset {offsets[1]}" in data


def test_delta_producing_more_than_it_declares(tmp_path: Path) -> None:
    d = objdir(tmp_path)
    n = 1 << 16
    delta = encode_size(len(BASE)) + encode_size(50 << 20) + b"\x80" * n   # says 50 MiB
    write_pack(d / "pack", [(oid(1), 3, BASE, None), (oid(2), 7, delta, oid(1))])
    _, data = run_bounded(d, [oid(2)], extra_mb=250)[:2]
    assert data.startswith("FormatError: ") and "exceeds its declared size" in data


def test_limit_is_configurable(tmp_path: Path) -> None:
    d = objdir(tmp_path)
    big = bytes(3 << 20)
    target = big + b"x"
    delta = make_delta(big, target, [("copy", 0, 1 << 16)] * 48 + [("insert", b"x")])
    write_pack(d / "pack", [(oid(1), 3, big, None), (oid(2), 6, delta, 0),
                            (oid(3), 3, b"small", None)])
    with open_object_store(d, "sha1") as s:
        assert s.read(oid(2)) == ("blob", target)
    with open_object_store(d, "sha1", max_object_size=1 << 20) as s:
        assert s.read_header(oid(2)) == ("blob", len(target))
        assert s.read(oid(3)) == ("blob", b"small")
        for o in (oid(1), oid(2)):
            with pytest.raises(FormatError, match="limit"):
                s.read(o)


def test_pack_object_inflating_past_its_header(tmp_path: Path) -> None:
    d = objdir(tmp_path)
    write_pack(d / "pack", [(oid(1), 3, b"0123456789", None, zeros_stream(b"", 1024)),
                            (oid(2), 6, make_delta(b"0123456789", b"abc"), 0,
                             zeros_stream(b"", 1024))])
    res = run_bounded(d, [oid(1), oid(2)])
    assert res[0] == "ok blob 10" and res[2] == "ok blob 0"    # the zeros say sizes 0 and 0
    for r in (res[1], res[3]):
        assert r.startswith("FormatError: ") and "pack-test.pack at offset" in r, r


def test_pack_object_size_2_to_the_66(tmp_path: Path) -> None:
    d = objdir(tmp_path)
    pp, ip, offsets = write_pack(d / "pack", [(oid(1), 3, b"abc", None)])
    body = b"PACK" + struct.pack(">II", 2, 1) + obj_header(3, 1 << 66) + zlib.compress(b"abc")
    pack_sum = hashlib.sha1(body).digest()
    pp.write_bytes(body + pack_sum)
    idx = ip.read_bytes()[:-40] + pack_sum                 # same single offset (12)
    ip.write_bytes(idx + hashlib.sha1(idx).digest())
    with open_object_store(d, "sha1") as s:
        for call in (s.read, s.read_header):
            with pytest.raises(FormatError, match="size") as e:
                call(oid(1))
            assert e.value.offset == offsets[0] == 12


def test_loose_blob_10_inflating_to_1gib(tmp_path: Path) -> None:
    d = objdir(tmp_path)
    bomb = zeros_stream(b"blob 10\0", 1024)
    o = oid(0xAB)
    p = d / o.hex()[:2] / o.hex()[2:]
    p.parent.mkdir()
    p.write_bytes(bomb)
    header, data = run_bounded(d, [o])
    assert header == "ok blob 10"
    assert data.startswith("FormatError: ") and str(p) in data and "10" in data


def test_loose_limit_and_trailing_bytes() -> None:
    good = zlib.compress(b"blob 3\0abc")
    assert decode_loose(good) == ("blob", b"abc")
    with pytest.raises(FormatError, match="limit"):
        decode_loose(good, "obj", max_size=2)
    with pytest.raises(FormatError, match="garbage"):
        decode_loose(good + b"\0", "obj")
    with pytest.raises(FormatError, match="size"):
        decode_loose(zlib.compress(b"blob 99999999999999999999999\0abc"), "obj")
    with pytest.raises(FormatError, match="header"):
        decode_loose(zlib.compress(b"blob " + b"1" * 100 + b"\0abc"), "obj")
