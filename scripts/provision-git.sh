#!/usr/bin/env bash
# Provision a git with reftable support (>= 2.45) for the tests and the lab.
#
# Prints the absolute path of the git binary on its last line of stdout.
#  1. $REFTABLE_LAB_GIT if set and new enough;
#  2. the system git if it is >= 2.45;
#  3. a git previously built into the cache folder;
#  4. otherwise builds git from Debian trixie's source package: a deb-src entry
#     is derived from this machine's own Debian apt source (same mirror URI and
#     keyring, suite "trixie"), `apt-get source git` fetches the source, and it
#     is built and installed into the cache folder.
# With --source it prints instead the path of that built source tree (fetching
# and building it if it is not there yet), whose t/ is git's own test suite
# (scripts/git-tests.sh runs it).
# Cache folder: $REFTABLE_LAB_CACHE/git (default ~/.cache/reftable-lab/git); the
# built source tree is kept, and reused, in $REFTABLE_LAB_CACHE/git-src.
set -euo pipefail

MIN_MAJOR=2
MIN_MINOR=45
CACHE_ROOT="${REFTABLE_LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reftable-lab}"
PREFIX="$CACHE_ROOT/git"
SRC_ROOT="$CACHE_ROOT/git-src"
SRC_STAMP="$SRC_ROOT/.built"     # holds the built tree's path; written last
MAKE_OPTS=(prefix="$PREFIX" NO_GETTEXT=1 NO_TCLTK=1 NO_PERL=1 NO_PYTHON=1 NO_CURL=1
           NO_EXPAT=1 NO_OPENSSL=1 INSTALL_SYMLINKS=1)

log() { echo "provision-git: $*" >&2; }

new_enough() {  # $1 = path to git
    local v major minor
    v=$("$1" --version 2>/dev/null | awk '{print $3}') || return 1
    major=${v%%.*}; minor=${v#*.}; minor=${minor%%.*}
    [[ "$major" =~ ^[0-9]+$ && "$minor" =~ ^[0-9]+$ ]] || return 1
    (( major > MIN_MAJOR || (major == MIN_MAJOR && minor >= MIN_MINOR) ))
}

# --- the built source tree, fetched and built once into $SRC_ROOT ---------------
built_source() {  # prints the built tree's path if it is there
    [[ -f "$SRC_STAMP" ]] || return 1
    local dir
    dir=$(cat "$SRC_STAMP")
    [[ -x "$dir/git" && -d "$dir/t" ]] || return 1
    echo "$dir"
}

build_source() {  # fetches and builds the source tree; prints its path
    if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi

    # --- derive a deb-src entry for trixie from the machine's own Debian source ---
    SRC_FILE=/etc/apt/sources.list.d/reftable-lab-trixie-src.sources
    if [[ ! -f "$SRC_FILE" ]]; then
        uri=""; keyring=""
        if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
            # first deb822 stanza whose URI is a plain Debian archive (not -security)
            read -r uri keyring < <(awk '
                BEGIN { RS=""; FS="\n" }
                {
                  u=""; k=""; t=0
                  for (i = 1; i <= NF; i++) {
                    if ($i ~ /^URIs:/) { sub(/^URIs:[ \t]*/, "", $i); split($i, a, " "); u = a[1] }
                    if ($i ~ /^Signed-By:/) { sub(/^Signed-By:[ \t]*/, "", $i); k = $i }
                    if ($i ~ /^Types:.*deb/) t = 1
                  }
                  if (t && u != "" && u !~ /security/) { print u, k; exit }
                }' /etc/apt/sources.list.d/debian.sources)
        fi
        if [[ -z "$uri" && -f /etc/apt/sources.list ]]; then
            uri=$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' /etc/apt/sources.list)
        fi
        if [[ -z "$uri" ]]; then
            log "error: no Debian apt source found in /etc/apt to derive a trixie deb-src entry from"
            exit 1
        fi
        log "adding deb-src for trixie from $uri"
        {
            echo "Types: deb-src"
            echo "URIs: $uri"
            echo "Suites: trixie"
            echo "Components: main"
            [[ -n "$keyring" ]] && echo "Signed-By: $keyring"
        } | $SUDO tee "$SRC_FILE" >/dev/null
    fi

    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq >&2
    # build tools and libraries from the machine's own release (not trixie's build-deps)
    $SUDO apt-get install -y -qq --no-install-recommends dpkg-dev xz-utils make gcc libc6-dev zlib1g-dev >&2

    rm -rf "$SRC_ROOT"
    mkdir -p "$SRC_ROOT"
    (cd "$SRC_ROOT" && apt-get source -qq git/trixie >&2)
    local srcdir
    srcdir=$(find "$SRC_ROOT" -maxdepth 1 -mindepth 1 -type d -name 'git-*' | head -n 1)
    [[ -n "$srcdir" ]] || { log "error: apt-get source produced no git-* folder"; exit 1; }
    log "building $(basename "$srcdir") in $SRC_ROOT (a few minutes on two cores)"
    # built where it stays: bin-wrappers/ and the test suite name the tree's own path
    make -C "$srcdir" -j"$(nproc)" "${MAKE_OPTS[@]}" all >&2
    echo "$srcdir" >"$SRC_STAMP"
    echo "$srcdir"
}

# one build at a time: a second provisioning (parallel test workers, make test beside
# make bench) waits here for the first, then finds its result
take_lock() {
    mkdir -p "$CACHE_ROOT"
    exec 8>"$CACHE_ROOT/.provision-git.lock"
    flock 8
}

if [[ "${1:-}" == "--source" ]]; then
    built_source && exit 0
    take_lock
    built_source || build_source
    exit 0
fi

if [[ -n "${REFTABLE_LAB_GIT:-}" ]]; then
    if new_enough "$REFTABLE_LAB_GIT"; then echo "$REFTABLE_LAB_GIT"; exit 0; fi
    log "REFTABLE_LAB_GIT=$REFTABLE_LAB_GIT is older than $MIN_MAJOR.$MIN_MINOR; ignoring it"
fi
if sys_git=$(command -v git) && new_enough "$sys_git"; then
    echo "$sys_git"; exit 0
fi
if [[ -x "$PREFIX/bin/git" ]] && new_enough "$PREFIX/bin/git"; then
    echo "$PREFIX/bin/git"; exit 0
fi

take_lock
if [[ -x "$PREFIX/bin/git" ]] && new_enough "$PREFIX/bin/git"; then   # built while we waited
    echo "$PREFIX/bin/git"; exit 0
fi
log "system git is older than $MIN_MAJOR.$MIN_MINOR; building git from Debian trixie's source package into $PREFIX"
srcdir=$(built_source || build_source)
STAGE="$PREFIX.tmp.$$"
rm -rf "$STAGE"
trap 'rm -rf "$STAGE"' EXIT
# install into a staging folder, then move it into place atomically
make -C "$srcdir" "${MAKE_OPTS[@]}" DESTDIR="$STAGE" install >&2
rm -rf "$PREFIX"
mv "$STAGE$PREFIX" "$PREFIX"
if ! new_enough "$PREFIX/bin/git"; then
    log "error: the git built at $PREFIX/bin/git is not >= $MIN_MAJOR.$MIN_MINOR"
    exit 1
fi
log "built $("$PREFIX/bin/git" --version)"
echo "$PREFIX/bin/git"
