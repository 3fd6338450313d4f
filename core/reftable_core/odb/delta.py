"""git's delta format (sans-IO): apply a delta to a base.

Contract: a delta is two LEB128-style sizes (base size, result size; 7 bits per
byte, least significant group first, high bit = continue -- NOT the reftable
varint) followed by instructions: a byte with the high bit set is a COPY (bits
0-3 select offset bytes, bits 4-6 size bytes, size 0 means 0x10000) from the
base; a byte 1..127 is an INSERT of that many literal bytes; 0 is reserved.
apply_delta(base, delta, limit) -> bytes; every inconsistency (base size mismatch,
copy past the base's end, truncated instruction, result size mismatch, a result
size over limit) raises FormatError with the offset inside the delta. The output
never grows past the declared result size (each copy is checked before it is made).
"""
from __future__ import annotations

from ..cython_shim import cython     # the Cython build compiles this as `import cython`
from ..errors import FormatError
from .inflate import MAX_OBJECT_SIZE, check_size

Buf = bytes | bytearray | memoryview


def decode_size(buf: Buf, off: int) -> tuple[int, int]:
    """Decode one delta-header size at buf[off:]; return (value, new_off)."""
    try:
        c = buf[off]
        off += 1
        val = c & 0x7F
        shift = 7
        while c & 0x80:
            if shift > 70:
                raise FormatError("delta size varint too long", offset=off)
            c = buf[off]
            off += 1
            val |= (c & 0x7F) << shift
            shift += 7
    except IndexError:
        raise FormatError("truncated delta size", offset=off) from None
    return val, off


def encode_size(value: int) -> bytes:
    out = bytearray()
    while True:
        c = value & 0x7F
        value >>= 7
        if value:
            out.append(c | 0x80)
        else:
            out.append(c)
            return bytes(out)


def delta_sizes(delta: Buf) -> tuple[int, int, int]:
    """(base_size, result_size, offset of the first instruction)."""
    base_size, off = decode_size(delta, 0)
    result_size, off = decode_size(delta, off)
    return base_size, result_size, off


@cython.locals(bmv="const unsigned char[:]", dmv="const unsigned char[:]", out="bytes",
               off="Py_ssize_t", n="Py_ssize_t", blen="Py_ssize_t", left="Py_ssize_t",
               cmd="int", cp_off="Py_ssize_t", cp_size="Py_ssize_t", end="Py_ssize_t")
def apply_delta(base: Buf, delta: Buf, limit: int = MAX_OBJECT_SIZE) -> bytes:
    """Return the object obtained by applying delta to base (at most limit bytes).
    One bulk copy per instruction (a slice of the base or of the delta); what is
    left of the declared size is checked before each one, so the output never
    grows past it. (The Cython build reads the delta's bytes from a typed view and
    memcpys each copy and insert into a result made at once: delta.pxd.)"""
    base_size, off = decode_size(delta, 0)
    result_size, off = decode_size(delta, off)
    check_size(result_size, limit, "delta result", None, 0)
    blen = len(base)
    if base_size != blen:
        raise FormatError(f"delta base size {base_size} != actual base size {blen}", offset=0)
    bmv = memoryview(base)
    dmv = memoryview(delta)
    out = bytearray()
    left = result_size          # bytes the instructions may still produce
    n = len(delta)
    while off < n:
        cmd = delta[off]
        off += 1
        if cmd & 0x80:
            cp_off = 0
            cp_size = 0
            try:
                if cmd & 0x01:
                    cp_off = delta[off]; off += 1
                if cmd & 0x02:
                    cp_off |= delta[off] << 8; off += 1
                if cmd & 0x04:
                    cp_off |= delta[off] << 16; off += 1
                if cmd & 0x08:
                    cp_off |= delta[off] << 24; off += 1
                if cmd & 0x10:
                    cp_size = delta[off]; off += 1
                if cmd & 0x20:
                    cp_size |= delta[off] << 8; off += 1
                if cmd & 0x40:
                    cp_size |= delta[off] << 16; off += 1
            except IndexError:
                raise FormatError("truncated delta copy instruction", offset=off) from None
            if cp_size == 0:
                cp_size = 0x10000
            end = cp_off + cp_size
            if end > blen:
                raise FormatError(f"delta copy past the base's end ({cp_off}+{cp_size} > {blen})",
                                  offset=off)
            left -= cp_size
            if left < 0:
                break
            out += bmv[cp_off:end]
        elif cmd:
            end = off + cmd
            if end > n:
                raise FormatError("truncated delta insert instruction", offset=off)
            left -= cmd
            off = end
            if left < 0:
                break
            out += dmv[end - cmd:end]
        else:
            raise FormatError("delta opcode 0 (reserved)", offset=off - 1)
    if left < 0:
        raise FormatError(f"delta result exceeds its declared size {result_size}", offset=off)
    if left:
        raise FormatError(f"delta result size {result_size - left} != declared {result_size}",
                          offset=off)
    return bytes(out)


def make_delta(base: bytes, target: bytes, instructions: list[tuple] | None = None) -> bytes:
    """Build a delta (for tests): instructions are ("copy", off, size) / ("insert", data);
    default: one insert of the whole target."""
    out = bytearray(encode_size(len(base)) + encode_size(len(target)))
    if instructions is None:
        instructions = [("insert", target[i:i + 127]) for i in range(0, len(target), 127)]
    for ins in instructions:
        if ins[0] == "insert":
            data = ins[1]
            out.append(len(data))
            out += data
        else:
            _, o, s = ins
            cmd = 0x80
            args = bytearray()
            for i in range(4):
                b = (o >> (8 * i)) & 0xFF
                if b:
                    cmd |= 1 << i
                    args.append(b)
            ss = 0 if s == 0x10000 else s
            for i in range(3):
                b = (ss >> (8 * i)) & 0xFF
                if b:
                    cmd |= 0x10 << i
                    args.append(b)
            out.append(cmd)
            out += args
    return bytes(out)
