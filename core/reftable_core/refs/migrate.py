"""`git refs migrate`: move a repository's refs to the other ref storage format.

Contract: migrate_ref_storage(commondir, refs, old_format, new_format, options) is git's
repo_migrate_ref_storage_format (refs.c; git 2.47, and with the flags of two later
commits: 00bd6c3e46's initial transaction, e4929cdf79's skipped check): it refuses a
repository whose format is new_format already ("current and new ref storage format are
equal"), one with reflogs ("migrating reflogs is not supported yet") and one with
linked worktrees ("migrating repositories with worktrees is not supported yet");
then it makes <commondir>/ref_migration.XXXXXX (mode 0700), creates the new store
there as git's ref_store_create_on_disk does, and copies every ref (root refs
such as HEAD and ORIG_HEAD included, symrefs as symrefs, no reflog created, no
object checked) in ONE transaction: an ordinary one with migrate_initial=off (git
2.47: the files backend writes every ref loose), an initial one with it on
(transaction(initial=True): the files backend writes the regular refs into
packed-refs; the initial_transaction_check flag decides whether its refname check
reads the new, empty store). With dry_run it stops there and returns the directory.
Otherwise it removes the old store (git's ref_store_remove_on_disk: files removes refs/,
logs/, the root refs and packed-refs; reftable removes reftable/, its stub HEAD,
refs/heads and refs/), moves the new store's files into commondir, removes the
directory (a failure is a warning in the returned Migration), and sets
core.repositoryformatversion and extensions.refStorage as
git's initialize_repository_version(..., reinit=1) does (set_repository_format).
Every failure raises MigrationError with git's text; one after the refs were
copied adds "migrated refs can be found at '<dir>'". The messages (and
Migration.shown) name the migration directory after display_dir, the git dir as
git names it (the directory itself is made in commondir).
Refs git would include broken (INCLUDE_BROKEN) are not copied: git 2.47 stops its
walk silently at the first one (ref_transaction_create refuses its null id).
"""
from __future__ import annotations

import os
import random
import shutil
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..config import read_config
from ..errors import MigrationError, ReftableError
from ..flags import Flags
from ..lockfile import write_locked
from ..reftable.record import REF_SYMREF
from .api import RefStore, RefUpdate
from .files_backend import FilesRefStore
from .loose import read_loose
from .refname import is_root_ref
from .reftable_backend import ReftableRefStore
from .stores import Store, open_store
from .worktree import WorktreeRefStore

FORMATS = ("files", "reftable")
REFTABLE_STUB_HEAD = b"ref: refs/heads/.invalid\n"
REFTABLE_STUB_HEADS = b"this repository uses the reftable format\n"
_TEMP_CHARS = string.ascii_letters + string.digits



@dataclass(frozen=True, slots=True)
class MigrateOptions:
    """How a migration opens the new store and what it does besides copying: the
    flags, object format, config (default: read from commondir) and objects
    callable the new store is opened with, its hooks directory (default: its
    own), dry_run (stop once the refs are copied) and display_dir (the git dir
    as the messages name it; default: commondir)."""
    flags: Flags
    object_format: str
    config: dict[str, str] | None = None
    objects: Callable[[], Any] | None = None
    hooks: str | None = None
    dry_run: bool = False
    display_dir: str | None = None


@dataclass
class Migration:
    """What a migration did: the directory the new store was made in (a dry run
    leaves the refs there), the refs copied, git's warnings (warning_errno text)."""
    directory: str
    shown: str                        # directory as git's messages name it
    refs: int
    warnings: list[str] = field(default_factory=list)


# -- what the old store holds ---------------------------------------------------------

def count_reflogs(store: Store) -> int:
    """How many reflogs refs_for_each_reflog would list (0 or more)."""
    if isinstance(store, ReftableRefStore):
        store.stack.reload()
        names = {rec.refname for rec in store.stack.merged.logs()}
        return len(names)
    count = 0
    for _, _, files in os.walk(os.path.join(store.gitdir, "logs")):
        count += len(files)
    return count


def has_worktrees(commondir: str) -> bool:
    """git's has_worktrees: a linked worktree whose gitdir file can be read."""
    top = os.path.join(commondir, "worktrees")
    try:
        names = os.listdir(top)
    except OSError:
        return False
    return any(os.path.isfile(os.path.join(top, n, "gitdir")) for n in names)


def _root_names(gitdir: str) -> list[bytes]:
    """The root refs of a files store: regular files in gitdir named as root refs."""
    out = []
    for entry in os.scandir(os.fsencode(gitdir)):
        if entry.is_file(follow_symlinks=False) and is_root_ref(entry.name):
            out.append(entry.name)
    return sorted(out)


def iter_migrated_refs(store: Store) -> Iterator[tuple[bytes, bytes | None, bytes | None]]:
    """(name, object id, symref target) for every ref git's migration walk gives
    (do_for_each_ref with DO_FOR_EACH_INCLUDE_ROOT_REFS), in name order."""
    if isinstance(store, ReftableRefStore):
        store.stack.reload()
        for rec in store.live_records_under(b""):
            if rec.refname.startswith(b"refs/") or is_root_ref(rec.refname):
                yield (rec.refname, None, rec.target) if rec.value_type == REF_SYMREF \
                    else (rec.refname, rec.value, None)
        return
    roots = []
    for name in _root_names(store.gitdir):
        lv = read_loose(store.gitdir, name, store.hash_size)
        if lv is not None and not lv.broken:
            roots.append((name, lv.oid if lv.target is None else None, lv.target))
    refs = ((r.refname, None, r.target) if r.value_type == REF_SYMREF
            else (r.refname, r.value, None) for r in store.iter_ref_records(b""))
    yield from sorted([*roots, *refs], key=lambda t: t[0])


# -- the stores on disk ---------------------------------------------------------------

def create_on_disk(gitdir: str, fmt: str) -> None:
    """git's ref_store_create_on_disk for a main store."""
    if fmt == "reftable":
        os.makedirs(os.path.join(gitdir, "reftable"), exist_ok=True)
        with open(os.path.join(gitdir, "HEAD"), "wb") as f:
            f.write(REFTABLE_STUB_HEAD)
        os.makedirs(os.path.join(gitdir, "refs"), exist_ok=True)
        with open(os.path.join(gitdir, "refs", "heads"), "wb") as f:
            f.write(REFTABLE_STUB_HEADS)
    else:
        for d in ("refs", "refs/heads", "refs/tags"):
            os.makedirs(os.path.join(gitdir, d), exist_ok=True)


def _strerror(e: OSError) -> str:
    return e.strerror or str(e)


def remove_on_disk(gitdir: str, fmt: str) -> list[str]:
    """git's ref_store_remove_on_disk; the error texts of what could not be removed."""
    errors: list[str] = []

    def rmtree(sub: str, what: str) -> None:
        try:
            shutil.rmtree(os.path.join(gitdir, sub))
        except FileNotFoundError:
            pass
        except OSError as e:
            errors.append(f"could not delete {what}: {_strerror(e)}")

    def unlink(sub: str, what: str) -> None:
        try:
            os.unlink(os.path.join(gitdir, sub))
        except OSError as e:
            errors.append(f"{what}: {_strerror(e)}")

    if fmt == "reftable":
        rmtree("reftable", "reftables")
        unlink("HEAD", "could not delete stub HEAD")
        unlink(os.path.join("refs", "heads"), "could not delete stub heads")
        try:
            os.rmdir(os.path.join(gitdir, "refs"))
        except OSError as e:
            errors.append(f"could not delete refs directory: {_strerror(e)}")
        return errors
    rmtree("refs", "refs")
    rmtree("logs", "logs")
    for name in _root_names(gitdir):
        try:
            os.unlink(os.path.join(os.fsencode(gitdir), name))
        except OSError as e:
            errors.append(f"could not delete root ref '{os.fsdecode(name)}': {_strerror(e)}")
    try:
        os.unlink(os.path.join(gitdir, "packed-refs"))
    except FileNotFoundError:
        pass
    except OSError:
        errors.append("could not delete packed-refs")
    return errors


def move_files(from_path: str, to_path: str) -> None:
    """git's move_files: rename every entry of from_path into to_path."""
    try:
        names = os.listdir(from_path)
    except OSError as e:
        raise MigrationError(f"could not open source directory '{from_path}': "
                             f"{_strerror(e)}") from None
    for name in names:
        src, dst = os.path.join(from_path, name), os.path.join(to_path, name)
        try:
            os.rename(src, dst)
        except OSError as e:
            raise MigrationError(f"could not link file '{src}' to '{dst}': "
                                 f"{_strerror(e)}") from None


def make_migration_dir(gitdir: str) -> str:
    """mkdtemp("<gitdir>/ref_migration.XXXXXX"): six random letters or digits, 0700."""
    for _ in range(100):
        path = os.path.join(gitdir, "ref_migration." + "".join(
            random.choices(_TEMP_CHARS, k=6)))
        try:
            os.mkdir(path, 0o700)
            return path
        except FileExistsError:
            continue
        except OSError as e:
            raise MigrationError(f"cannot create migration directory: {_strerror(e)}") from None
    raise MigrationError("cannot create migration directory: File exists")


# -- the config ------------------------------------------------------------------

def _section_of(line: str) -> str | None:
    """The lower-cased section name a "[section]" line opens (subsections: None)."""
    s = line.strip()
    if not s.startswith("[") or "]" not in s or '"' in s:
        return None
    return s[1:s.index("]")].strip().lower()


def _key_of(line: str) -> str | None:
    s = line.strip()
    if not s or s[0] in "#;[":
        return None
    return s.split("=", 1)[0].strip().lower()


def config_set(lines: list[str], section: str, key: str, value: str | None) -> list[str]:
    """git_config_set(section.key, value) on a config file's lines (value None:
    unset, a section left without entries removed with its header, as git 2.47
    does); new entries go after the section's last entry, a new section at the end."""
    current: str | None = None
    last_entry: int | None = None
    header: int | None = None
    found: int | None = None
    for i, line in enumerate(lines):
        sec = _section_of(line)
        if sec is not None or line.strip().startswith("["):
            current = sec
            if sec == section:
                header, last_entry = i, i
            continue
        if current == section and _key_of(line) is not None:
            last_entry = i
            if _key_of(line) == key:
                found = i
    out = list(lines)
    if value is None:
        if found is None:
            return out
        del out[found]
        assert header is not None
        end = header + 1
        while end < len(out) and _section_of(out[end]) is None \
                and not out[end].strip().startswith("["):
            if _key_of(out[end]) is not None or out[end].strip():
                return out
            end += 1
        del out[header]
        return out
    entry = f"\t{key} = {value}\n"
    if found is not None:
        out[found] = entry
    elif last_entry is not None:
        out.insert(last_entry + 1, entry)
    else:
        if out and not out[-1].endswith("\n"):
            out[-1] += "\n"
        out += [f"[{section}]\n", entry]
    return out


def set_repository_format(commondir: str, object_format: str, ref_format: str) -> None:
    """git's initialize_repository_version(hash, format, reinit=1) on <commondir>/config."""
    path = os.path.join(commondir, "config")
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().splitlines(keepends=True)
    except FileNotFoundError:
        lines = []
    version = "0" if object_format == "sha1" and ref_format == "files" else "1"
    lines = config_set(lines, "core", "repositoryformatversion", version)
    lines = config_set(lines, "extensions", "objectformat",
                       None if object_format == "sha1" else object_format)
    lines = config_set(lines, "extensions", "refstorage",
                       None if ref_format == "files" else ref_format)
    write_locked(path, "".join(lines).encode("utf-8", "surrogateescape"))


# -- the migration -------------------------------------------------------------------

def copy_refs(old: Store, new: Store, initial: bool) -> int:
    """migrate_one_ref for every ref, in one transaction of the new store (an initial
    one: migrate_initial=on): symrefs as symrefs (REF_NO_DEREF), others created
    (REF_SKIP_OID_VERIFICATION), no reflog (REF_SKIP_CREATE_REFLOG). The number of refs
    copied."""
    tx = new.transaction(initial=initial)
    zero = bytes(new.hash_size)
    n = 0
    for name, oid, target in iter_migrated_refs(old):
        if target is not None:
            tx.queue(RefUpdate(name, new_target=target,
                               flags={"no-deref", "skip-create-reflog"}))
        else:
            tx.queue(RefUpdate(name, new_value=oid, old_value=zero,
                               flags={"create", "skip-create-reflog", "skip-oid-verification"}))
        n += 1
    tx.commit()
    return n


def migrate_ref_storage(commondir: str, refs: RefStore, old_format: str, new_format: str,
                        options: MigrateOptions) -> Migration:
    """git's repo_migrate_ref_storage_format (see the module contract) of the main
    ref store of refs (a repository's RefStore; a WorktreeRefStore's main one)."""
    store = refs.main if isinstance(refs, WorktreeRefStore) else refs
    if not isinstance(store, (FilesRefStore, ReftableRefStore)):
        raise MigrationError(f"cannot migrate a {type(store).__name__}")
    if old_format == new_format:
        raise MigrationError("current and new ref storage format are equal")
    try:
        reflogs = count_reflogs(store)
    except ReftableError:
        raise MigrationError("cannot count reflogs") from None
    if reflogs:
        raise MigrationError("migrating reflogs is not supported yet")
    if has_worktrees(commondir):
        raise MigrationError("migrating repositories with worktrees is not supported yet")
    o = options
    cfg = dict(o.config) if o.config is not None else read_config(commondir)
    new_dir = make_migration_dir(commondir)
    shown = os.path.join(o.display_dir or commondir, os.path.basename(new_dir))
    create_on_disk(new_dir, new_format)
    new = open_store(new_dir, new_format, o.flags, o.object_format, cfg, o.objects)
    if o.hooks is not None:
        new.hooks = o.hooks
    try:
        copied = copy_refs(store, new, o.flags.migrate_initial)
    except ReftableError as e:
        raise MigrationError(str(e)) from None
    finally:
        new.close()
    if o.dry_run:
        return Migration(new_dir, shown, copied)
    store.close()
    try:
        errors = remove_on_disk(commondir, old_format)
        if errors:
            raise MigrationError("".join(errors))
        move_files(new_dir, commondir)
    except MigrationError as e:
        raise MigrationError(f"{e}\nmigrated refs can be found at '{shown}'") from None
    done = Migration(new_dir, shown, copied)
    try:
        os.rmdir(new_dir)
    except OSError as e:
        done.warnings.append(f"could not remove temporary migration directory '{shown}': "
                             f"{_strerror(e)}")
    set_repository_format(commondir, o.object_format, new_format)
    return done
