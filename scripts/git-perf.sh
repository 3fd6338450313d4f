#!/usr/bin/env bash
# git's own performance scripts for the commands the lab implements, run through git's
# t/perf/run once with git and once with reftable-lab in place of git (the router of
# scripts/git-router.sh, the one scripts/git-tests.sh uses), then aggregated: git's
# t/perf/aggregate.perl (its own table, git's column against the lab's, as run prints it)
# and lab/gitperf.py (per test: git's time, the lab's, lab / git).
#
# The scripts (t/perf of the provisioned git 2.47.3):
#   p1400-update-ref    update-ref (create, update, delete a ref, one process each) and
#                       update-ref --stdin
#   p6300-for-each-ref  for-each-ref over loose and packed refs, sorted and not, --count,
#                       tags, %(*objectname); one test pipes into git's cat-file
# Left out: p1401-ref-store is not in 2.47.3 (it came later); p1450-fsck and
# p1451-fsck-skip-list time fsck; p1500-graph-walks times rev-list and merge-base walks
# (for-each-ref only in its set-up); p1006-cat-file times cat-file: none times a swapped
# command. No other t/perf/p1* or p6* script exists at 2.47.3.
#
# Both scripts build their own fresh repository (perf-lib's test_perf_fresh_repo,
# deterministic: test_commit_bulk, fast-import with fixed dates); perf-lib still wants a
# GIT_PERF_REPO, so it gets a generated one (100 commits, fixed dates: below). Their sizes are git's: 5000 update-ref --stdin
# triples and 1000 x 3 update-ref processes, 10000 refs per type (branches, custom refs,
# tags, nested tags) and 10 for-each-ref calls per test. The lab is a Python process
# (~0.08 s a start), so the default run divides those counts by GIT_PERF_SCALE (default 10:
# 500 triples, 100 x 3 processes, 1000 refs per type, 1 call per test), in copies of the two
# scripts named <script>-s<SCALE>.sh beside them; GIT_PERF_SCALE=1 runs git's scripts
# unchanged. GIT_PERF_REPEAT_COUNT (default 3) is t/perf's: each test's fastest run counts.
#
# Environment: REFTABLE_LAB_BIN (default <project>/.venv/bin/reftable-lab), GIT_PERF_SRC
# (a built git source tree; default the provisioned one: pass a copy of it when
# scripts/git-tests.sh may run at the same time, it replaces that tree's wrapper),
# GIT_PERF_OUT (folder for the results and the router; default a new temporary one, kept),
# GIT_PERF_SCALE, GIT_PERF_REPEAT_COUNT, GIT_PERF_SCRIPTS (default the two above),
# REFTABLE_LAB_FLAGS and PYTHONPATH (reach the lab).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/scripts/git-router.sh"   # write_git_router, GIT_ROUTER_MARK
LAB=${REFTABLE_LAB_BIN:-$ROOT/.venv/bin/reftable-lab}
PY=$(dirname "$LAB")/python
SCALE=${GIT_PERF_SCALE:-10}
export GIT_PERF_REPEAT_COUNT=${GIT_PERF_REPEAT_COUNT:-3}
SCRIPTS=${GIT_PERF_SCRIPTS:-p1400-update-ref p6300-for-each-ref}

log() { echo "git-perf: $*" >&2; }

[[ -x "$LAB" ]] || { log "error: no reftable-lab at $LAB (make setup, or set REFTABLE_LAB_BIN)"; exit 2; }
[[ "$SCALE" =~ ^[1-9][0-9]*$ ]] || { log "error: GIT_PERF_SCALE=$SCALE is not a positive integer"; exit 2; }
START=$SECONDS
SRC=$(cd "${GIT_PERF_SRC:-$(bash "$ROOT/scripts/provision-git.sh" --source | tail -n 1)}" && pwd)
WRAPPER="$SRC/bin-wrappers/git"
if grep -qF "$GIT_ROUTER_MARK" "$WRAPPER"; then
    log "error: $WRAPPER is a router now (scripts/git-tests.sh running on this tree?); pass GIT_PERF_SRC=<a copy>"
    exit 2
fi
if [[ -n "${GIT_PERF_OUT:-}" ]]; then mkdir -p "$GIT_PERF_OUT"; OUT=$(cd "$GIT_PERF_OUT" && pwd)
else OUT=$(mktemp -d "${TMPDIR:-/tmp}/reftable-lab-git-perf.XXXXXX"); fi
"$PY" -m compileall -q "$(dirname "$("$PY" -c 'import lab; print(lab.__file__)')")" \
    "$(dirname "$("$PY" -c 'import reftable_core; print(reftable_core.__file__)')")" >/dev/null ||
    log "warning: could not byte-compile the lab's modules"

# --- the repository perf-lib wants named (GIT_PERF_REPO / GIT_PERF_LARGE_REPO) -----------
# perf-lib refuses to start without one even for scripts that make a fresh repository (as
# both default scripts do); a generated one, deterministic: 100 commits of one file each,
# fixed names and dates, through git's fast-import
REPO="$OUT/perf-repo.git"
if [[ ! -f "$REPO/.reftable-lab-done" ]]; then
    rm -rf "$REPO"
    "$WRAPPER" init -q --bare "$REPO"
    for i in $(seq 1 100); do
        printf 'commit refs/heads/main\ncommitter C O Mitter <committer@example.com> %d +0000\n' $(( 1112911993 + i * 60 ))
        printf 'data <<EOF\ncommit %d\nEOF\n' "$i"
        printf 'M 644 inline file%d.t\ndata <<EOF\n%d\nEOF\n' "$i" "$i"
    done | "$WRAPPER" -C "$REPO" fast-import --quiet
    "$WRAPPER" -C "$REPO" symbolic-ref HEAD refs/heads/main
    touch "$REPO/.reftable-lab-done"
fi
export GIT_PERF_REPO=$REPO GIT_PERF_LARGE_REPO=$REPO

# --- the lab's "git": t/perf/run takes DIR/bin-wrappers/git as the git of DIR -----------
LABDIR="$OUT/lab"
mkdir -p "$LABDIR/bin-wrappers"
write_git_router "$LABDIR/bin-wrappers/git" "$LAB" "$WRAPPER"

# --- the scripts, scaled down by SCALE (copies beside git's) ----------------------------
scaled() {  # $1 = script name; prints the name to run
    local name=$1 n=$((SCALE))
    [[ $n -eq 1 ]] && { echo "$name"; return; }
    sed -e "s/^ref_count_per_type=10000\$/ref_count_per_type=$(( 10000 / n ))/" \
        -e "s/^test_iteration_count=10\$/test_iteration_count=$(( 10 / n > 0 ? 10 / n : 1 ))/" \
        -e "s/test_seq 5000)/test_seq $(( 5000 / n )))/" \
        -e "s/test_seq 1000)/test_seq $(( 1000 / n > 0 ? 1000 / n : 1 )))/" \
        "$SRC/t/perf/$name.sh" >"$SRC/t/perf/$name-s$n.sh"
    chmod +x "$SRC/t/perf/$name-s$n.sh"
    echo "$name-s$n"
}
runs=()
for s in $SCRIPTS; do
    [[ -f "$SRC/t/perf/$s.sh" ]] || { log "error: no $s.sh in $SRC/t/perf"; exit 2; }
    runs+=("$(scaled "$s")")
done

log "git $("$WRAPPER" --version | awk '{print $3}') from $SRC, the lab $LAB; scale 1/$SCALE of git's sizes" \
    "(GIT_PERF_SCALE), GIT_PERF_REPEAT_COUNT=$GIT_PERF_REPEAT_COUNT; the scripts make their own" \
    "fresh deterministic repositories (test_perf_fresh_repo; GIT_PERF_REPO: $REPO, 100 commits); results: $OUT"
files=()
for r in "${runs[@]}"; do files+=("$r.sh"); done
(cd "$SRC/t/perf" && TEST_OUTPUT_DIRECTORY="$OUT" TEST_OUTPUT_DIRECTORY_OVERRIDE="$OUT" ./run "$SRC" "$LABDIR" -- "${files[@]}" \
    >"$OUT/run.log" 2>&1) || { tail -n 30 "$OUT/run.log" >&2; log "error: t/perf/run failed (log: $OUT/run.log)"; exit 1; }

echo "== t/perf/aggregate.perl (first column git, second the lab)"
(cd "$SRC/t/perf" && ./aggregate.perl --results-dir="$OUT/test-results" "$SRC" "$LABDIR" -- "${files[@]}") ||
    log "warning: aggregate.perl failed"
echo
echo "== per test: the fastest of $GIT_PERF_REPEAT_COUNT runs, seconds (scale 1/$SCALE)"
"$PY" -m lab.gitperf "$OUT/test-results" "$SRC" "$LABDIR" "${runs[@]}"
log "done in $(( SECONDS - START ))s (results: $OUT)"
