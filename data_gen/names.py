"""Realistic, deterministic ref names, produced already sorted and in bounded chunks.

Contract: `ref_names(n, seed)` yields (kind, names) chunks; concatenated, the
names are exactly `n` distinct, valid git refnames (bytes) in strictly
ascending byte order, free of directory/file conflicts, and identical for
identical (n, seed, mix). `kind` says what a ref should point at: "tag" refs
get annotated tag objects (so peeled values exist), every other kind a commit.

The shape imitates a large hosted repository (GitLab/GitHub style):

    refs/heads/main, refs/heads/release-1.4, refs/heads/<user>/<topic>
    refs/keep-around/<hex object id>
    refs/merge-requests/<N>/head (and /merge for every fourth N)
    refs/remotes/origin/..., refs/remotes/<fork>/<topic>
    refs/tags/v<major>.<minor>.<patch>[-rc<k>]

Nothing is sorted globally: every category is split into "buckets" whose keys
are prefix-disjoint (a leaf name, or a directory ending in "/"), the keys are
sorted, and each bucket is sorted on its own. Memory is bounded by the largest
bucket, so 13 million names stream without holding them all.
"""
from __future__ import annotations

import hashlib
import random
from typing import Iterator, Sequence

# category -> share of the refs (the order here is NOT the sort order)
DEFAULT_MIX: dict[str, float] = {
    "heads": 0.15,
    "keep-around": 0.15,
    "merge-requests": 0.40,
    "remotes": 0.10,
    "tags": 0.20,
}
# refs/<category>/ prefixes, already in byte order
CATEGORY_ORDER = ("heads", "keep-around", "merge-requests", "remotes", "tags")
KIND = {"heads": "head", "keep-around": "keep", "merge-requests": "mr",
        "remotes": "remote", "tags": "tag"}

_WORDS = (
    "add api async auth backend batch build cache cleanup cli config core crash "
    "data db debug deps docs drop encode error event export feature fetch fix flaky "
    "format gc handle hash http import index init lint lock log login memory merge "
    "metrics migrate mmap network notes object optimize pack parse patch perf pipeline "
    "plugin pool proto queue race read ref refactor release remove rename repo retry "
    "revert runner schema search security server setup sort speedup stack stats "
    "storage sync table test thread timeout token trace tree typo ui update upgrade "
    "upload validate wip worker write"
).split()
_SYLLABLES = ("an ba be bo ca chi da de di el fa ga ha ja jo ka ki la le li lo ma me "
              "mi mo na ne ni no pa pe ra re ri ro sa se si so ta te ti to va vi ya yu "
              "za ze").split()
_LEAF_BRANCHES = ("main", "develop", "maint", "next", "staging", "production")


def rng_for(seed: int, purpose: str) -> random.Random:
    """An independent, stable RNG stream per (seed, purpose)."""
    digest = hashlib.sha256(f"{seed}:{purpose}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def apportion(n: int, mix: dict[str, float]) -> dict[str, int]:
    """Split n into integer counts proportional to mix (largest remainder)."""
    total = sum(mix.values())
    raw = {k: n * v / total for k, v in mix.items()}
    counts = {k: int(x) for k, x in raw.items()}
    rest = n - sum(counts.values())
    for k in sorted(raw, key=lambda k: (counts[k] - raw[k], k))[:rest]:
        counts[k] += 1
    # the default branch must exist whenever there is a ref at all
    if n > 0 and counts.get("heads", 0) == 0:
        donor = max(counts, key=lambda k: (counts[k], k))
        counts[donor] -= 1
        counts["heads"] = 1
    return counts


def _spread(total: int, buckets: int, rng: random.Random, skew: float = 1.3) -> list[int]:
    """`total` split over `buckets` with a heavy tail (a few busy users, many quiet)."""
    if buckets <= 0:
        return []
    weights = [rng.paretovariate(skew) for _ in range(buckets)]
    wsum = sum(weights)
    counts = [int(total * w / wsum) for w in weights]
    rest = total - sum(counts)
    order = sorted(range(buckets), key=lambda i: -weights[i])
    i = 0
    while rest > 0:
        counts[order[i % buckets]] += 1
        rest -= 1
        i += 1
    return counts


def _user_names(count: int, rng: random.Random, avoid: set[str]) -> list[str]:
    # a dict, not a set: insertion order must not depend on string hashing
    users: dict[str, None] = {}
    while len(users) < count:
        r = rng.random()
        name = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
        if r < 0.25:
            name += "." + "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3)))
        elif r < 0.35:
            name += str(rng.randint(1, 999))
        if name not in avoid:
            users[name] = None
    return list(users)


def _topics(count: int, rng: random.Random) -> list[str]:
    """`count` distinct single-component topic branch names."""
    out: dict[str, None] = {}
    words = _WORDS
    nw = len(words)
    rnd = rng.random
    while len(out) < count:
        r = rnd()
        if r < 0.5:
            t = words[int(rnd() * nw)] + "-" + words[int(rnd() * nw)]
        elif r < 0.8:
            t = words[int(rnd() * nw)] + "-" + words[int(rnd() * nw)] + "-" + words[int(rnd() * nw)]
        else:
            t = "issue-%d-%s" % (1 + int(rnd() * 99999), words[int(rnd() * nw)])
        if t in out:
            t = "%s-%d" % (t, 2 + int(rnd() * 9998))
        out[t] = None
    return list(out)


def _emit_buckets(prefix: bytes, buckets: list[tuple[str, list[str]]],
                  ) -> Iterator[list[bytes]]:
    """buckets: (key, [full suffixes starting with key]); sort keys then each bucket."""
    buckets.sort(key=lambda kb: kb[0])
    pstr = prefix.decode()
    batch: list[bytes] = []
    for _key, names in buckets:
        names.sort()
        batch.extend(map(str.encode, [pstr + s for s in names]))
        if len(batch) >= 65536:
            yield batch
            batch = []
    if batch:
        yield batch


def _heads(count: int, rng: random.Random) -> Iterator[list[bytes]]:
    if count <= 0:
        return
    n_leaf = min(count, max(1, count // 100))
    leaves = ["main"]
    releases = []
    for i in range(n_leaf - 1):
        if i + 1 < len(_LEAF_BRANCHES):
            leaves.append(_LEAF_BRANCHES[i + 1])
        else:
            j = len(releases)
            releases.append(f"release-{j // 20}.{j % 20}")
    leaves += releases
    rest = count - len(leaves)
    buckets: list[tuple[str, list[str]]] = [(name, [name]) for name in leaves]
    if rest > 0:
        n_users = max(1, rest // 25)
        users = _user_names(n_users, rng, set(leaves))
        for user, c in zip(users, _spread(rest, n_users, rng)):
            if c:
                buckets.append((user + "/", [f"{user}/{t}" for t in _topics(c, rng)]))
    yield from _emit_buckets(b"refs/heads/", buckets)


def _keep_around(count: int, rng: random.Random, hexlen: int) -> Iterator[list[bytes]]:
    if count <= 0:
        return
    bits = hexlen * 4
    low = bits - 8
    fmt = f"%0{hexlen}x"
    per = [count // 256 + (1 if b < count % 256 else 0) for b in range(256)]
    batch: list[bytes] = []
    for top, c in enumerate(per):
        vals: set[int] = set()
        base = top << low
        getrandbits = rng.getrandbits
        while len(vals) < c:
            vals.add(base | getrandbits(low))
        batch.extend(b"refs/keep-around/" + (fmt % v).encode() for v in sorted(vals))
        if len(batch) >= 65536:
            yield batch
            batch = []
    if batch:
        yield batch


def _lex_numbers(limit: int) -> Iterator[list[str]]:
    """1..limit as decimal strings, in string order, in chunks."""
    prefixes = sorted(str(i) for i in range(1, 1000))
    for p in prefixes:
        v = int(p)
        if v > limit:
            continue
        if len(p) < 3:
            yield [p]
            continue
        chunk: list[str] = []
        scale = 1
        while v * scale <= limit:
            lo = v * scale
            hi = min((v + 1) * scale - 1, limit)
            chunk.extend(map(str, range(lo, hi + 1)))
            scale *= 10
        chunk.sort()
        yield chunk


def _merge_requests(count: int, rng: random.Random) -> Iterator[list[bytes]]:
    if count <= 0:
        return
    # MR k has /head, every fourth also /merge: k + k//4 names for 1..k
    limit = max(1, (count * 4) // 5)
    while limit + limit // 4 < count:
        limit += 1
    left = count
    batch: list[bytes] = []
    pre = "refs/merge-requests/"
    for chunk in _lex_numbers(limit):
        part = [x for num in chunk
                for x in ((pre + num + "/head", pre + num + "/merge") if int(num) % 4 == 0
                          else (pre + num + "/head",))]
        if len(part) > left:
            part = part[:left]
        batch.extend(map(str.encode, part))
        left -= len(part)
        if len(batch) >= 65536 or not left:
            yield batch
            batch = []
        if not left:
            return


def _remotes(count: int, rng: random.Random) -> Iterator[list[bytes]]:
    if count <= 0:
        return
    n_forks = count // 40
    forks = _user_names(n_forks, rng, {"origin"}) if n_forks else []
    fork_counts = _spread(count // 3, n_forks, rng) if n_forks else []
    origin = count - sum(fork_counts)
    buckets: list[tuple[str, list[str]]] = []
    # origin mirrors main/develop and <user>/<topic> branches
    names = [f"origin/{b}" for b in _LEAF_BRANCHES[:min(origin, 2)]]
    left = origin - len(names)
    if left > 0:
        n_users = max(1, left // 20)
        users = _user_names(n_users, rng, set(_LEAF_BRANCHES))
        for user, c in zip(users, _spread(left, n_users, rng)):
            names.extend(f"origin/{user}/{t}" for t in _topics(c, rng))
    buckets.append(("origin/", names))
    for fork, c in zip(forks, fork_counts):
        if c:
            buckets.append((fork + "/", [f"{fork}/{t}" for t in _topics(c, rng)]))
    yield from _emit_buckets(b"refs/remotes/", buckets)


def _tags(count: int, rng: random.Random) -> Iterator[list[bytes]]:
    if count <= 0:
        return
    # majors hold up to 40 minors x 25 patches; a third of the releases had rc tags
    buckets: list[tuple[str, list[str]]] = []
    left = count
    major = 0
    while left > 0:
        names: list[str] = []
        for minor in range(40):
            for patch in range(25):
                if not left:
                    break
                base = f"v{major}.{minor}.{patch}"
                names.append(base)
                left -= 1
                if patch == 0 and left:
                    for rc in range(1, rng.randint(1, 4)):
                        if not left:
                            break
                        names.append(f"{base}-rc{rc}")
                        left -= 1
        buckets.append((f"v{major}.", names))
        major += 1
    yield from _emit_buckets(b"refs/tags/", buckets)


def ref_names(n: int, seed: int, hexlen: int = 40,
              mix: dict[str, float] | None = None) -> Iterator[tuple[str, list[bytes]]]:
    """Yield (kind, sorted chunk of refnames); see the module comment."""
    counts = apportion(n, mix or DEFAULT_MIX)
    makers = {
        "heads": lambda c: _heads(c, rng_for(seed, "heads")),
        "keep-around": lambda c: _keep_around(c, rng_for(seed, "keep-around"), hexlen),
        "merge-requests": lambda c: _merge_requests(c, rng_for(seed, "mr")),
        "remotes": lambda c: _remotes(c, rng_for(seed, "remotes")),
        "tags": lambda c: _tags(c, rng_for(seed, "tags")),
    }
    for cat in CATEGORY_ORDER:
        c = counts.get(cat, 0)
        if c:
            kind = KIND[cat]
            for chunk in makers[cat](c):
                yield kind, chunk


def pick_probe_names(names: Sequence[bytes]) -> dict[str, str]:
    """A few names for lookup benchmarks: one in the middle, and one that is missing."""
    if not names:
        return {"missing": "refs/heads/does-not-exist"}
    mid = names[len(names) // 2].decode()
    return {"first": names[0].decode(), "middle": mid, "last": names[-1].decode(),
            "missing": mid + "-missing"}
