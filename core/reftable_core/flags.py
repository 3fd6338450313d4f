"""The optimization switches of the lab, one frozen dataclass.

Contract: a Flags value is chosen once and passed explicitly down the layers;
each layer picks an implementation from it when an object is built, so hot
loops never test a flag. Flags() is "git today" (every optimization on);
baseline() is "git before the patches" (every optimization off). Text form:
"mmap=off,pq_cmp=on,packed_reader=getdelim,delta_cache_limit=16m".

Each flag is written once, as a field whose metadata holds its baseline value,
its text parser and its description (values, off/before, on/after, seed,
layer and, for a flag from a later upstream commit, that commit's id and date);
FLAG_INFO (name -> FlagInfo, in field order), BOOL_FLAGS, baseline(), the
parsers and by_source() (the flags grouped: seeds, then upstream commits) are
derived from the fields.
"""
from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from .errors import APIError

ENV_VAR = "REFTABLE_LAB_FLAGS"

PACKED_READERS = ("fgetc", "getc_unlocked", "getdelim", "mmap")
PACKED_LOOKUPS = ("parse_all", "bsearch")
REFNAME_SAFETY = ("normalize", "escape_scan", "skip_sane")
DELTA_CACHE_LRU = ("blob_first", "single")
DEFAULT_DELTA_CACHE_LIMIT = 96 * 1024 * 1024


def format_value(v: Any) -> str:
    if isinstance(v, bool):
        return "on" if v else "off"
    return str(v)


def parse_size(text: str) -> int:
    m = re.fullmatch(r"(\d+)\s*([kmg]?)(i?b?)", text.strip().lower())
    if not m:
        raise APIError(f"bad size {text!r}: expected e.g. 16m, 512k, 1g or bytes")
    mult = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[m.group(2)]
    return int(m.group(1)) * mult


def _parse_bool(text: str) -> bool:
    t = text.lower()
    if t in ("on", "true", "1", "yes"):
        return True
    if t in ("off", "false", "0", "no"):
        return False
    raise APIError(f"bad boolean flag value {text!r}: expected on or off")


def _choice(values: tuple[str, ...]) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in values:
            raise APIError(f"bad value {text!r}: expected one of {', '.join(values)}")
        return text
    return parse


def _parse_cache_index(text: str) -> str:
    if text == "hashmap":
        return text
    m = re.fullmatch(r"fixed:(\d+)", text)
    if not m or int(m.group(1)) < 1:
        raise APIError(f"bad delta_cache_index {text!r}: expected hashmap or fixed:N (N >= 1)")
    return f"fixed:{int(m.group(1))}"


@dataclass(frozen=True)
class FlagInfo:
    name: str
    values: str          # human description of the accepted values
    off: str             # the "before the patch" behaviour
    on: str              # the "after the patch" behaviour
    seed: str            # seed thread / patch it reproduces
    layer: str           # where it acts
    upstream: str = ""   # a later upstream commit it models: "<commit id> <date>" ("": a seed)

    @property
    def source(self) -> str:
        """The group a flag is listed under: "upstream <commit> <date>" for a flag
        from a later upstream commit, else "seed <thread>" (000 .. 004)."""
        if self.upstream:
            return f"upstream {self.upstream}"
        return f"seed {self.seed.split()[0]}"


def _about(values: str, off: str, on: str, seed: str, layer: str, upstream: str = "") -> FlagInfo:
    """A flag's FlagInfo text; its name is the field's, filled in by FLAG_INFO."""
    return FlagInfo("", values, off, on, seed, layer, upstream)


def _flag(default: Any, before: Any, parse: Callable[[str], Any], about: FlagInfo) -> Any:
    """A Flags field: its default (git today), its value in baseline() (git before
    the patch), its text parser and its FlagInfo text (_about), kept in the field's
    metadata."""
    return field(default=default, metadata={"before": before, "parse": parse, "about": about})


def _switch(off: str, on: str, seed: str, layer: str, upstream: str = "") -> Any:
    """An on|off flag: on by default, off in baseline()."""
    return _flag(True, False, _parse_bool, _about("on|off", off, on, seed, layer, upstream))


@dataclass(frozen=True)
class Flags:
    merged_cmp: bool = _switch(
        "dropping shadowed records formats both keys into the iterator's two reused"
        " buffers (829231dc20 made them reusable) and compares the buffers",
        "compares records by key fields, no key formatted", "000 2/7", "merged")
    same_subiter_skip: bool = _switch(
        "always compares with the queue top",
        "stops when the top comes from the same sub-iterator", "000 3/7", "merged")
    pq_cmp: bool = _switch(
        "the queue's less-than formats both keys into two fresh buffers per comparison"
        " (STRBUF_INIT ... strbuf_release)",
        "compares by key fields", "000 4/7", "pq")
    single_subiter_bypass: bool = _switch(
        "every record goes through the priority queue, even with one sub-iterator left",
        "once the queue is empty, the last sub-iterator's records are returned directly"
        " (reftable/merged: circumvent pqueue with single subiter)",
        "git 2.45 (no seed)", "merged", upstream="f8c1a8e2e1 2024-03-04")
    block_key_swap: bool = _switch(
        "the block iterator copies key into last_key once per record"
        " (strbuf_reset + strbuf_addbuf)",
        "swaps the two buffers (strbuf_swap), no copy", "000 5/7", "block")
    ref_name_alloc: bool = _switch(
        "decoding releases the name, then reallocs the (always empty) pointer: the same"
        " work as a fresh allocation, by a longer path",
        "allocates the name directly (reftable_malloc; published 1.01x: the patch is"
        " mostly clarity)", "000 6/7", "record")
    # -- the 2024-03/04 decoding series (Patrick Steinhardt; issue 14 item 4), as far as
    # the Python model has the patch's choice to make. Not flags, because the choice does
    # not exist here (each record is a fresh object a caller may keep; Python's zlib has
    # neither inflateReset nor inflate into a caller's buffer): 193fcb3ff8 and e0bd13beea
    # (log refname / message buffers reused across records), 7b8abc4d8c (scratch buffer
    # for decode_string), dd347bbce6 (uncompressed log block buffer reused), ce1f213cc9
    # (one z_stream for all inflations); lab.scenarios' log-iterate scenario lists them,
    # with their heap summaries, as unreproduced and says why for each.
    # git daf4f43d0d (2024-03-04, "reftable/record: decode keys in place"):
    #   -	n = reftable_decode_key(&it->key, &extra, it->last_key, in);
    #   +	n = reftable_decode_key(&it->last_key, &extra, in);
    #   -	strbuf_swap(&it->last_key, &it->key);
    decode_key_in_place: bool = _switch(
        "each key is assembled in a second buffer (reftable_decode_key: strbuf_reset, then"
        " strbuf_add of last_key's prefix and of the suffix: a new bytearray here), which"
        " then becomes last_key (block_key_swap)",
        "last_key is cut to the prefix length and the suffix appended to it (strbuf_setlen,"
        " strbuf_add): one buffer, one copy, no key buffer to swap",
        "upstream (no seed)", "block", upstream="daf4f43d0d 2024-03-04")
    # git d51d8cc368 (2024-04-03, "reftable/block: avoid decoding keys when searching
    # restart points"), restart_needle_less in reftable/block.c:
    #   -	struct strbuf kth_restart_key = STRBUF_INIT;
    #   -	n = reftable_decode_key(&kth_restart_key, &unused_extra, in);
    #   -	result = strbuf_cmp(&args->needle, &kth_restart_key);
    #   -	strbuf_release(&kth_restart_key);
    #   +	n = reftable_decode_keylen(in, &prefix_len, &suffix_len, &extra);
    #   +	if (n < 0 || prefix_len) {
    #   +	n = memcmp(args->needle.buf, in.buf,
    #   +		   args->needle.len < suffix_len ? args->needle.len : suffix_len);
    # (before, a nonzero prefix length failed too: reftable_decode_key rejects a prefix
    # longer than the key it extends, here the empty kth_restart_key)
    restart_key_in_place: bool = _switch(
        "each restart record the binary search probes has its key decoded into a new"
        " buffer (reftable_decode_key into an empty strbuf: both lengths read, a nonzero"
        " prefix length refused, a new bytearray with the suffix added), which is"
        " compared with the wanted key",
        "the probed restart key's bytes are compared where they are (the same lengths"
        " read, the prefix length checked to be 0, no key buffer)",
        "upstream (no seed)", "block", upstream="d51d8cc368 2024-04-03")
    # git b00bcb7c49 (2024-04-08, "reftable/reader: iterate to next block in place"):
    #   -	err = table_iter_next_block(&next, ti);
    #   -	table_iter_close(ti);
    #   -	*ti = next;
    #   +	err = table_iter_next_block(ti);
    next_block_in_place: bool = _switch(
        "at the end of each block the table iterator builds a new block iterator for the"
        " next block and drops the old one (struct table_iter next = TABLE_ITER_INIT;"
        " table_iter_close(ti); *ti = next)",
        "the one record loop advances into the next block itself (table_iter_next_block(ti))",
        "upstream (no seed)", "table", upstream="b00bcb7c49 2024-04-08")
    # git 9da5c992dd (2024-04-08, "reftable/block: avoid copying block iterators on seek"):
    #   -		block_iter_copy_from(&next, it);
    #   -		err = block_iter_next(&next, &rec);
    #   -		block_iter_copy_from(it, &next);
    #   +		size_t prev_off = it->next_off;
    #   +		err = block_iter_next(it, &rec);
    #   +			it->next_off = prev_off;
    seek_in_place: bool = _switch(
        "a block seek's linear scan decodes each record in a copy of the iterator"
        " (block_iter_copy_from(&next, it): offset and last_key copied), and copies it"
        " back after each record below the wanted key",
        "one iterator: the scan remembers the record's offset and restores it when the"
        " record is >= the wanted key (last_key then holds that record's own key)",
        "upstream (no seed)", "block", upstream="9da5c992dd 2024-04-08")
    block_type_early_exit: bool = _switch(
        "a block of an unwanted type is fully set up before it is rejected",
        "rejected after its type byte", "003", "block/table")
    stat_cache: bool = _switch(
        "every up-to-date check re-reads tables.list",
        "stat of tables.list compared; re-read only on change", "004 3/4", "stack")
    # git 4af31dc84a (2024-04-08, "refs/reftable: skip duplicate name checks"):
    # refs/reftable-backend.c "+	refs->write_options.skip_name_check = 1;", so
    # reftable/stack.c reftable_addition_add's stack_check_addition returns at once;
    # before, it opened the new table, read all its refs and checked each against the
    # stack (reftable/refname.c modification_validate: the ref's name + "/" sought, each
    # leading directory read) after the backend's refs_verify_refname_available did
    skip_name_check: bool = _switch(
        "each added table is opened and every ref in it checked against the stack by the"
        " reftable library (stack_check_addition: a seek to refname/ and a read per"
        " leading directory), after the ref store's own D/F check",
        "the library's check is skipped (write_options.skip_name_check = 1): the ref"
        " store's refs_verify_refname_available is the only D/F check",
        "upstream (no seed)", "stack", upstream="4af31dc84a 2024-04-08")
    # git 146a946321 (2026-07-10, "reftable: fix quadratic behavior in the presence of
    # tombstones"): reftable/stack.c "-	new_merged->suppress_deletions = 1;" "+	...
    # = st->opts.suppress_deletions;" (git no longer sets it), and in
    # refs/reftable-backend.c the readers skip deletions after their bound checks:
    # read_ref "if (strcmp(ref.refname, refname) || reftable_ref_record_is_deletion(&ref))",
    # the ref iterator "if (iter->ref.value_type == REFTABLE_REF_DELETION) continue;",
    # the reflog readers "if (reftable_log_record_is_deletion(&log)) continue;"
    tombstone_suppression: bool = _switch(
        "the merged iterator consumes deletion records in its own loop (suppress_deletions,"
        " merged_iter_next_void) before a reader can check its bound: a seek into a range"
        " of tombstones scans all of them",
        "deletions are returned to the ref store's readers (read_ref, the D/F check,"
        " prefix and log iteration), which skip them after their bound checks",
        "upstream (no seed)", "merged/refs.reftable", upstream="146a946321 2026-07-10")
    # git 7cf65e2660 (2024-11-26, "refs/reftable: reuse iterators when reading refs"):
    # struct reftable_backend gains "struct reftable_iterator it;", read_ref does
    # "if (!be->it.ops) reftable_stack_init_ref_iterator(be->stack, &be->it);" then
    # seeks it, and reftable_backend_on_reload destroys it when the stack reloads
    iterator_reuse: bool = _switch(
        "each ref read builds a new merged ref iterator (reftable_stack_read_ref)",
        "the ref store keeps one ref iterator and re-seeks it per read, dropped when the"
        " stack reloads", "upstream (no seed)", "refs.reftable", upstream="7cf65e2660 2024-11-26")
    # git 00bd6c3e46 (2024-11-20, 'refs: use "initial" transaction semantics to migrate
    # refs'): repo_migrate_ref_storage_format's
    # "-	ret = ref_transaction_commit(transaction, errbuf);" becomes
    # "+	ret = ref_store_transaction_begin(new_refs, REF_TRANSACTION_FLAG_INITIAL, errbuf);"
    # ... "+	ret = ref_transaction_commit(transaction, errbuf);" (the begin gains the flag;
    # c0b9cf3b55 just before it taught files_transaction_finish_initial to write symrefs
    # and root refs loose beside the packed-refs file).
    migrate_initial: bool = _switch(
        "refs migrate copies the refs in an ordinary transaction of the new store: the"
        " files backend locks, writes and renames one loose file per ref (git 2.47)",
        "refs migrate commits one initial transaction: the files backend writes the"
        " regular refs into one packed-refs file, only symrefs and root refs loose",
        "upstream (no seed)", "refs", upstream="00bd6c3e46 2024-11-20")
    # git e4929cdf79 (2024-11-20, "refs: skip collision checks in initial transactions"):
    # refs.c refs_verify_refname_available gains "int initial_transaction";
    # "-		if (!refs_read_raw_ref(refs, dirname.buf, ...))" becomes
    # "+		if (!initial_transaction && !refs_read_raw_ref(...))" and the
    # "refs_ref_iterator_begin(refs, dirname.buf, ...)" loop over refname/ moves under
    # "+	if (!initial_transaction) {"; files_transaction_finish_initial passes 1 and
    # reftable_be_transaction_prepare "transaction->flags & REF_TRANSACTION_FLAG_INITIAL".
    # The checks against the transaction's own names (extras) stay.
    initial_transaction_check: bool = _switch(
        "each ref of an initial transaction (into an empty store: refs migrate) is checked"
        " against the store's refs: a read per leading directory and a ref iterator"
        " sought to refname/ (git just before e4929cdf79)",
        "the initial transaction skips the checks against existing refs (the store is"
        " empty); the checks against its own names stay", "upstream (no seed)", "refs",
        upstream="e4929cdf79 2024-11-20")
    # git 66ed011bf7 (2024-11-20, "reftable/writer: optimize allocations by using a
    # scratch buffer"), writer_add_record and reftable_writer_add_ref in reftable/writer.c:
    #   -	struct reftable_buf key = REFTABLE_BUF_INIT;
    #   -	err = reftable_record_key(rec, &key);
    #   +	err = reftable_record_key(rec, &w->buf);
    #   -	struct reftable_buf buf = REFTABLE_BUF_INIT;
    #   -		err = reftable_buf_add(&buf, (char *)reftable_ref_record_val1(ref),
    #   +		reftable_buf_reset(&w->buf);
    #   +		err = reftable_buf_add(&w->buf, (char *)reftable_ref_record_val1(ref),
    #   -		err = writer_index_hash(w, &buf);
    #   +		err = writer_index_hash(w, &w->buf);
    writer_scratch: bool = _switch(
        "the table writer builds a new buffer per record for its key (writer_add_record:"
        " the order check against last_key) and one per ref with an object id for that id"
        " (reftable_writer_add_ref: writer_index_hash)",
        "both are the writer's one scratch buffer (w->buf), reset and refilled per record",
        "upstream (no seed)", "writer", upstream="66ed011bf7 2024-11-20")
    # git d94ac23d3b (2024-11-20, "reftable/block: optimize allocations by using scratch
    # buffer"), block_writer_add in reftable/block.c:
    #   -	struct reftable_buf key = REFTABLE_BUF_INIT;
    #   -	err = reftable_record_key(rec, &key);
    #   +	err = reftable_record_key(rec, &w->buf);
    #   -	n = reftable_encode_key(&is_restart, out, last, key,
    #   +	n = reftable_encode_key(&is_restart, out, last, w->buf,
    block_writer_scratch: bool = _switch(
        "the block writer builds a new buffer per record it adds (or tries to add) for the"
        " record's key, which it checks, prefix-compresses and appends",
        "the key goes into the block writer's one scratch buffer (bw->buf, kept for the"
        " whole table), reset and refilled per record",
        "upstream (no seed)", "block_writer", upstream="d94ac23d3b 2024-11-20")
    mmap: bool = _switch(
        "every block read is a pread into a fresh buffer",
        "views into one mmap per table, no copy per block", "004 4/4", "blocksource")
    packed_reader: str = _flag(
        "mmap", "fgetc", _choice(PACKED_READERS), _about(
            "|".join(PACKED_READERS), "fgetc: one character at a time through stdio",
            "mmap: scan the mapped file for newlines", "001", "packed"))
    packed_lookup: str = _flag(
        "bsearch", "parse_all", _choice(PACKED_LOOKUPS), _about(
            "|".join(PACKED_LOOKUPS), "parse_all: load every ref, then look up",
            "bsearch: binary search on the mapped file", "001 (discussion)", "packed"))
    refname_safety: str = _flag(
        "skip_sane", "normalize", _choice(REFNAME_SAFETY), _about(
            "|".join(REFNAME_SAFETY), "normalize: allocate a normalized copy per refname",
            "skip_sane: safety check only for refnames failing the format check",
            "001 6/6, v2 8/9", "refname"))
    delta_cache_index: str = _flag(
        "hashmap", "fixed:256", _parse_cache_index, _about(
            "fixed:N|hashmap", "fixed:256: N slots keyed by (pack, offset), a collision evicts",
            "hashmap: a real hash map", "002 6/7", "odb.delta_cache"))
    delta_cache_lru: str = _flag(
        "single", "blob_first", _choice(DELTA_CACHE_LRU), _about(
            "|".join(DELTA_CACHE_LRU),
            "blob_first: evict blobs first (walking the whole list), then others",
            "single: one LRU list", "002 5/7", "odb.delta_cache"))
    delta_cache_limit: int = _flag(
        DEFAULT_DELTA_CACHE_LIMIT, DEFAULT_DELTA_CACHE_LIMIT, parse_size, _about(
            "bytes (k/m/g suffixes)", "96m (core.deltaBaseCacheLimit default)", "96m", "002",
            "odb.delta_cache"))

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            _validate(f.name, getattr(self, f.name))

    # -- construction -------------------------------------------------
    @classmethod
    def parse(cls, spec: str, base: "Flags | None" = None) -> "Flags":
        """Apply "name=value,..." on top of base (default: Flags())."""
        return (base or cls()).with_spec(spec)

    def with_spec(self, spec: str) -> "Flags":
        changes: dict[str, Any] = {}
        for item in re.split(r"[,\s]+", spec.strip()):
            if not item:
                continue
            if item in ("baseline", "all=off"):
                return baseline().with_spec(spec.replace(item, "", 1))
            if item in ("default", "all=on"):
                return Flags().with_spec(spec.replace(item, "", 1))
            if "=" not in item:
                raise APIError(f"bad flag item {item!r}: expected name=value")
            name, _, raw = item.partition("=")
            name = name.strip().replace("-", "_")
            if name not in FLAG_INFO:
                raise APIError(f"unknown flag {name!r}; known: {', '.join(FLAG_INFO)}")
            changes[name] = _PARSERS[name](raw.strip())
        return dataclasses.replace(self, **changes)

    def replace(self, **changes: Any) -> "Flags":
        return dataclasses.replace(self, **changes)

    # -- presentation ---------------------------------------------------
    def to_spec(self, only_changed_from: "Flags | None" = None) -> str:
        parts = []
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if only_changed_from is not None and getattr(only_changed_from, f.name) == v:
                continue
            parts.append(f"{f.name}={format_value(v)}")
        return ",".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def __str__(self) -> str:
        return self.to_spec()


_FIELDS = dataclasses.fields(Flags)

# the public views of the field metadata (FlagInfo per flag, in field order)
FLAG_INFO: dict[str, FlagInfo] = {
    f.name: dataclasses.replace(f.metadata["about"], name=f.name) for f in _FIELDS}
BOOL_FLAGS = tuple(n for n in FLAG_INFO if FLAG_INFO[n].values == "on|off")
_PARSERS: dict[str, Callable[[str], Any]] = {f.name: f.metadata["parse"] for f in _FIELDS}
_BEFORE: dict[str, Any] = {f.name: f.metadata["before"] for f in _FIELDS}


def by_source() -> dict[str, list[str]]:
    """Flag names grouped by FlagInfo.source: the seeds in thread order (000 .. 004),
    then the later upstream commits by date; field order within a group."""
    groups: dict[str, list[str]] = {}
    for name, info in FLAG_INFO.items():
        groups.setdefault(info.source, []).append(name)

    def order(source: str) -> tuple[int, str]:
        if source.startswith("upstream "):
            return (1, source.split()[2])          # "upstream <commit> <date>": by date
        return (0, source)
    return {src: groups[src] for src in sorted(groups, key=order)}


def baseline() -> Flags:
    """Every optimization off: git before the patches (each field's "before" value,
    so a new flag cannot be forgotten here)."""
    return Flags(**_BEFORE)


def from_env(environ: Mapping[str, str] | None = None, base: Flags | None = None) -> Flags:
    """Flags from $REFTABLE_LAB_FLAGS on top of base (default Flags())."""
    env = os.environ if environ is None else environ
    spec = env.get(ENV_VAR, "")
    return (base or Flags()).with_spec(spec)


def resolve(spec: str | None = None, use_baseline: bool = False,
            environ: Mapping[str, str] | None = None) -> Flags:
    """The CLI rule: start from default (or baseline), apply the env var, then --flags."""
    base = baseline() if use_baseline else Flags()
    flags = from_env(environ, base)
    if spec:
        flags = flags.with_spec(spec)
    return flags


def _validate(name: str, value: Any) -> None:
    if name in BOOL_FLAGS:
        if not isinstance(value, bool):
            raise APIError(f"flag {name} must be a bool, got {value!r}")
    elif name == "delta_cache_limit":
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise APIError(f"flag delta_cache_limit must be a byte count >= 0, got {value!r}")
    else:
        if not isinstance(value, str):
            raise APIError(f"flag {name} must be a string, got {value!r}")
        _PARSERS[name](value)


def fixed_slots(flags: Flags) -> int | None:
    """N for delta_cache_index=fixed:N, None for hashmap."""
    if flags.delta_cache_index == "hashmap":
        return None
    return int(flags.delta_cache_index.split(":", 1)[1])
