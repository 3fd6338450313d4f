#!/usr/bin/env bash
# Build reftable_core with mypyc, out of tree, and print the folder to put first on
# PYTHONPATH (the compiled core: a copy of the package with the extension modules
# beside the .py files, which the import system prefers; the source tree is never touched).
#
#   bash scripts/build-compiled-core.sh [CORE_DIR]    (default: this checkout's core/)
#
# The folder is <cache>/compiled-core/<key>/ (cache: $REFTABLE_LAB_CACHE, else
# ~/.cache/reftable-lab), key = a hash of the package's .py files, this script's
# INTERPRETED list and mypy options, the Python and mypy versions and the
# optimization level, so an edit of the source makes a new build and an
# unchanged one is reused (it holds lab-build.json once complete). Builds are
# serialized by a lock a key (parallel test workers wait for the first one). PYTHON names
# the interpreter with mypy installed (default: python3); MYPYC_OPT_LEVEL (default 3)
# is passed to mypyc. Log: <folder>/lab-build.log.
set -euo pipefail
export LC_ALL=C                 # one sort order for the key

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CORE_DIR="$(cd "${1:-$ROOT/core}" && pwd)"
PYTHON="${PYTHON:-python3}"
case "$PYTHON" in                # a relative path (make's .venv/bin/python) made absolute:
  */*) PYTHON="$(cd "$(dirname "$PYTHON")" && pwd)/$(basename "$PYTHON")" ;;   # we cd below
esac
OPT="${MYPYC_OPT_LEVEL:-3}"
CACHE_ROOT="${REFTABLE_LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reftable-lab}"
BUILD_INFO=lab-build.json

# Modules left interpreted (mypyc supports the mix: a compiled module calls them through
# the ordinary Python API), each with the reason. (An interpreted module must define no
# subclass of a compiled class: "interpreted classes cannot inherit from compiled".)
# Typing fixes made so that the rest compiles: reftable/basics.py (Buf includes
# mmap.mmap), reftable/pq.py (an Entry is a list), the loops' `name: bytes | None`
# (scripts/gen_loops.py), reftable/block.py (two type-ignores: bytes or a map),
# reftable/merged.py (readers: Sequence[Any]; mypyc crashes on reversed() of a list[Any]),
# reftable/iter.py (Reftable.hash_id: str | None, as an empty MergedTable has it).
# A mypyc miscompilation avoided: lockfile.py binds os.write's result before slicing
# (view[os.write(fd, view):] compiled runs the write twice); refs/files_backend.py's
# _Upd has class-level defaults, no __init__(*args, **kw) (compiled, the forwarded
# args arrive as one tuple); odb/delta_cache.py's CacheStats.as_dict reads
# STATS_FIELDS (a compiled class has no __slots__ attribute).
INTERPRETED=(
  "reftable_core/errors.py|TransactionLockError(TransactionError, LockError): a native class has one base (mypyc: multiple inheritance is not supported)"
  "reftable_core/counters.py|Counters sets its attributes by name from COUNTER_NAMES (setattr, __slots__ built from the tuple): a native class declares each attribute"
  "reftable_core/refs/api.py|its Protocols are @runtime_checkable (isinstance checks): a compiled Protocol is no protocol class to typing, which refuses it at import; the compiled backends may subclass its RefStoreBase (the reverse would not work)"
  "reftable_core/reftable/blocksource.py|its ctypes.Structure subclass (_PyBuffer): mypyc's C for it names a module _ctypes it never declares (gcc: CPyModule__ctypes undeclared)"
)

cd "$CORE_DIR"
[ -f reftable_core/__init__.py ] || { echo "build-compiled-core: no reftable_core/ in $CORE_DIR" >&2; exit 2; }
mypy_version="$("$PYTHON" -c 'import mypy.version; print(mypy.version.__version__)')" || {
  echo "build-compiled-core: $PYTHON has no mypy (pip install mypy: the dev extra)" >&2; exit 2; }
# what the output depends on: the sources, the modules left out, the mypy options
# (MYPY_INI), Python, mypy and the optimization level
MYPY_INI='[mypy]\ndisable_error_code = attr-defined\n'
key="$( { find reftable_core -name '*.py' -print0 | sort -z | xargs -0 sha256sum
          printf '%s\n' "${INTERPRETED[@]}"; printf "$MYPY_INI"
          "$PYTHON" -c 'import sys; print(sys.version)'; echo "$mypy_version $OPT"; } \
        | sha256sum | cut -c1-16)"
OUT="$CACHE_ROOT/compiled-core/$key"
mkdir -p "$CACHE_ROOT/compiled-core"
if [ -f "$OUT/$BUILD_INFO" ]; then echo "$OUT"; exit 0; fi
exec 9>"$OUT.lock"               # one lock a key: builds of other sources go on meanwhile
flock 9
if [ -f "$OUT/$BUILD_INFO" ]; then echo "$OUT"; exit 0; fi

TMP="$OUT.tmp.$$"
rm -rf "$TMP"
mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT
find reftable_core -name '*.py' -print0 | tar --null -cf - -T - | tar -C "$TMP" -xf -
skip=()
for entry in "${INTERPRETED[@]}"; do skip+=("${entry%%|*}"); done
mapfile -t modules < <(cd "$TMP" && find reftable_core -name '*.py' | sort \
                       | grep -vxF -f <(printf '%s\n' "${skip[@]}"))
# Counters' attributes are set by name (see INTERPRETED): mypy cannot see them, and a
# compiled module reads them as any attribute of a Python object (generic lookup)
printf "$MYPY_INI" > "$TMP/mypy.ini"
echo "build-compiled-core: mypyc ${#modules[@]} modules of $CORE_DIR into $OUT" >&2
start=$(date +%s)
if ! (cd "$TMP" && MYPYC_OPT_LEVEL="$OPT" "$PYTHON" -m mypyc --config-file mypy.ini \
        "${modules[@]}") > "$TMP/$BUILD_INFO.log" 2>&1; then
  mkdir -p "$CACHE_ROOT/compiled-core/failed"
  cp "$TMP/$BUILD_INFO.log" "$CACHE_ROOT/compiled-core/failed/$key.log"
  echo "build-compiled-core: mypyc failed; its log: $CACHE_ROOT/compiled-core/failed/$key.log" >&2
  exit 1
fi
seconds=$(( $(date +%s) - start ))
mv "$TMP/$BUILD_INFO.log" "$TMP/lab-build.log"
rm -rf "$TMP/build" "$TMP/mypy.ini" "$TMP/.mypy_cache"
"$PYTHON" - "$TMP" "$CORE_DIR" "$seconds" "$mypy_version" "$OPT" "${INTERPRETED[@]}" <<'EOF'
import json, sys
from pathlib import Path
tmp, src, seconds, mypy, opt, *interpreted = sys.argv[1:]
root = Path(tmp)
so = sorted(str(p.relative_to(root)) for p in root.rglob("*.so"))
info = {"src": src, "mypy": mypy, "opt_level": int(opt), "seconds": int(seconds),
        "python": sys.version.split()[0], "extensions": so,
        "interpreted": dict(e.split("|", 1) for e in interpreted)}
(root / "lab-build.json").write_text(json.dumps(info, indent=1))
EOF
rm -rf "$OUT"
mv "$TMP" "$OUT"
trap - EXIT
echo "build-compiled-core: done in ${seconds}s" >&2
echo "$OUT"
