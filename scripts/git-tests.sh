#!/usr/bin/env bash
# Run git's own ref tests with reftable-lab in place of `git show-ref`,
# `git update-ref`, `git refs` and `git for-each-ref`.
#
# The built source tree of the provisioned git (scripts/provision-git.sh
# --source: fetched and built once into the cache, then reused) provides t/.
# For the duration of the run its bin-wrappers/git (the `git` the tests call) is
# replaced by a plain router: `git [global options] show-ref|update-ref|refs|for-each-ref ...`
# runs reftable-lab with the same arguments, everything else the real git
# wrapper. git's internal calls use GIT_EXEC_PATH and never pass through it. No
# test is edited, skipped or special-cased; a trap restores the wrapper.
#
# Runs t1403-show-ref, t1400-update-ref, t6300-for-each-ref, t1404-update-ref-errors,
# t1416-ref-transaction-hooks, t1450-fsck, t1430-bad-ref-name,
# t0601-reffiles-pack-refs, t1410-reflog, t1401-symbolic-ref,
# t0613-reftable-write-options, t0600-reffiles-backend, t1460-refs-migrate,
# t6301-for-each-ref-errors, t6302-for-each-ref-filter and t0602-reffiles-fsck with
# GIT_TEST_DEFAULT_REF_FORMAT=files and
# =reftable, and t0610-reftable-basics (reftable only), JOBS at a time (default
# 2, the longest scripts first), each under a TIMEOUT (seconds, default 2400).
# The lab's modules are byte-compiled first (each of the ~2000 calls would
# otherwise compile them again when PYTHONDONTWRITEBYTECODE is set). Prints one
# line per script and format from the TAP output (passed, failed, skipped,
# plan), the failing tests, the tests skipped by git's own prerequisites and
# those left out by GIT_TESTS_RUN, each by name, and a total with the run time;
# exits non-zero when a test fails, a script does not finish, or its plan is
# not met.
#
# Environment: REFTABLE_LAB_BIN (default <project>/.venv/bin/reftable-lab),
# JOBS, TIMEOUT, GIT_TESTS_OUT (folder for the logs; default a new temporary
# one, kept), GIT_TESTS (the scripts, default the seventeen above; "t1403 t0610"
# works too), GIT_TESTS_RUN (git's --run=<selection> for every script, e.g.
# "99,147,173"; a partial run's plan counts the tests not selected as skipped),
# GIT_TESTS_FLAGS (the lab's flags for the run, default migrate_initial=off: the
# provisioned git is 2.47, before 00bd6c3e46, and its t1460 checks 2.47's layout, a
# loose file per migrated ref; no other flag changes what a script can see),
# GIT_TESTS_SRC (a built git source tree to take t/ from instead of the provisioned
# one: a copy of it lets two runs go at once, each routing its own wrapper). PYTHONPATH and REFTABLE_LAB_FLAGS, if set, reach reftable-lab.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LAB=${REFTABLE_LAB_BIN:-$ROOT/.venv/bin/reftable-lab}
JOBS=${JOBS:-2}
TIMEOUT=${TIMEOUT:-2400}
RUN=${GIT_TESTS_RUN:-}
TESTS=${GIT_TESTS:-t1400-update-ref t6300-for-each-ref t0610-reftable-basics t1404-update-ref-errors t1403-show-ref t1416-ref-transaction-hooks t1450-fsck t1430-bad-ref-name t0601-reffiles-pack-refs t1410-reflog t1401-symbolic-ref t0613-reftable-write-options t0600-reffiles-backend t1460-refs-migrate t6301-for-each-ref-errors t6302-for-each-ref-filter t0602-reffiles-fsck}
FLAGS=${GIT_TESTS_FLAGS-migrate_initial=off}
. "$ROOT/scripts/git-router.sh"   # write_git_router, GIT_ROUTER_MARK
MARK=$GIT_ROUTER_MARK

log() { echo "git-tests: $*" >&2; }

[[ -x "$LAB" ]] || { log "error: no reftable-lab at $LAB (make setup, or set REFTABLE_LAB_BIN)"; exit 2; }
START=$SECONDS

# --- byte-compile the modules the lab imports (the interpreter beside it) ---
PY=$(dirname "$LAB")/python
[[ -x "$PY" ]] || PY=$(sed -n '1s/^#![[:space:]]*//p' "$LAB")
if ! "$PY" - <<'EOF' >/dev/null; then log "warning: could not byte-compile the lab's modules"; fi
import compileall, os, sys
import lab, reftable_core
ok = all([compileall.compile_dir(os.path.dirname(m.__file__), quiet=1)
          for m in (lab, reftable_core)])
sys.exit(0 if ok else 1)
EOF
SRC=${GIT_TESTS_SRC:-$(bash "$ROOT/scripts/provision-git.sh" --source | tail -n 1)}
WRAPPER="$SRC/bin-wrappers/git"
PRISTINE="$SRC/../bin-wrappers-git.orig"   # the build's own wrapper, saved once
OUT=${GIT_TESTS_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/reftable-lab-git-tests.XXXXXX")}
mkdir -p "$OUT"

# --- the router --------------------------------------------------------------
if ! grep -qF "$MARK" "$WRAPPER"; then
    cp -p "$WRAPPER" "$PRISTINE"
fi
[[ -f "$PRISTINE" ]] || { log "error: $WRAPPER is a router and no saved original exists"; exit 2; }
restore() { cp -p "$PRISTINE" "$WRAPPER"; }
trap restore EXIT
trap 'exit 130' INT TERM

write_git_router "$WRAPPER" "$LAB" "$PRISTINE" "$FLAGS"

# --- the runs ----------------------------------------------------------------
runs=()
for t in $TESTS; do
    script=$(cd "$SRC/t" && ls "$t"*.sh 2>/dev/null | head -n 1) || true
    [[ -n "$script" ]] || { log "error: no test script $t in $SRC/t"; exit 2; }
    name=${script%.sh}
    if [[ "$name" == t0610-* ]]; then runs+=("$name reftable"); else
        runs+=("$name files" "$name reftable"); fi
done

# The trash directories go under a short root of their own, not under $OUT: gpg-agent's
# sockets live in the trash directory's gpghome, and a Unix socket's path has at most 107
# bytes (under $OUT=/tmp/reftable-lab-git-tests.XXXXXX t6300's
# ".../trash directory.t6300-for-each-ref/gpghome/S.gpg-agent.browser" has 125: no agent
# starts and git's GPG prerequisite fails). A script that fails keeps its trash there;
# <name>.<format>.trash names it.
run_one() {  # $1 = script name, $2 = ref format; writes $OUT/<name>.<format>.{tap,status}
    local name=$1 fmt=$2 dir="$OUT/$1.$2" rc=0 root
    mkdir -p "$dir"
    root=$(mktemp -d "${TMPDIR:-/tmp}/gt.XXXXXX")
    (cd "$SRC/t" && GIT_TEST_DEFAULT_REF_FORMAT=$fmt TEST_OUTPUT_DIRECTORY="$dir" \
        timeout -k 10 "$TIMEOUT" sh "./$name.sh" --verbose-log --root="$root" ${RUN:+"--run=$RUN"} \
        >"$dir.tap" 2>"$dir.err" </dev/null) || rc=$?
    echo "$rc" >"$dir.status"
    if [[ $rc -eq 0 ]]; then rm -rf "$root"; else echo "$root" >"$dir.trash"; fi
}
export -f run_one
export SRC OUT TIMEOUT RUN
log "running ${#runs[@]} test scripts from $SRC/t, $JOBS at a time (logs: $OUT)"
printf '%s\n' "${runs[@]}" | xargs -P "$JOBS" -L 1 bash -c 'run_one "$0" "$1"'

# --- the counts --------------------------------------------------------------
status=0
printf '%-32s %-9s %5s %5s %5s %5s %5s  %s\n' script format pass fail skip todo plan result
for r in "${runs[@]}"; do
    set -- $r
    tap="$OUT/$1.$2.tap"
    rc=$(cat "$OUT/$1.$2.status")
    pass=$(grep -E '^ok [0-9]+( |$)' "$tap" | grep -vc '# skip' || true)
    skip=$(grep -cE '^ok [0-9]+ # skip' "$tap" || true)
    fail=$(grep -E '^not ok [0-9]+' "$tap" | grep -vc '# TODO' || true)
    todo=$(grep -E '^not ok [0-9]+' "$tap" | grep -c '# TODO' || true)   # git's known breakages
    plan=$(sed -n 's/^1\.\.\([0-9]*\).*/\1/p' "$tap" | tail -n 1)
    if [[ $rc -eq 124 || $rc -eq 137 ]]; then result="timed out after ${TIMEOUT}s"
    elif [[ -z "$plan" ]]; then result="no plan (exit $rc)"
    elif [[ $rc -ne 0 || $fail -ne 0 ]]; then result="FAIL (exit $rc)"
    elif (( pass + skip + todo != plan )); then result="plan not met"
    else result=ok; fi
    [[ $result == ok ]] || status=1
    printf '%-32s %-9s %5s %5s %5s %5s %5s  %s\n' "$1" "$2" "$pass" "$fail" "$skip" "$todo" "${plan:--}" "$result"
done
total_pass=0 total_fail=0 total_skip=0
for r in "${runs[@]}"; do
    set -- $r
    tap="$OUT/$1.$2.tap"
    total_pass=$(( total_pass + $(grep -E '^ok [0-9]+( |$)' "$tap" | grep -vc '# skip' || true) ))
    total_fail=$(( total_fail + $(grep -E '^not ok [0-9]+' "$tap" | grep -vc '# TODO' || true) ))
    total_skip=$(( total_skip + $(grep -cE '^ok [0-9]+ # skip' "$tap" || true) ))
    if grep -E '^not ok [0-9]+' "$tap" | grep -qv '# TODO'; then
        echo "--- $1 ($2): failing tests"
        grep -E '^not ok [0-9]+' "$tap" | grep -v '# TODO' || true
    fi
    # git's test-lib names the reason: "(missing PREREQ)", or "(--run)" /
    # "(GIT_SKIP_TESTS)" for a test left out by the selection
    if grep -E '^ok [0-9]+ # skip' "$tap" | grep -q '(missing '; then
        echo "--- $1 ($2): skipped by git's prerequisites"
        grep -E '^ok [0-9]+ # skip' "$tap" | grep '(missing '
    fi
    n=$(grep -E '^ok [0-9]+ # skip' "$tap" | grep -vc '(missing ' || true)
    if [[ $n -ne 0 ]]; then
        echo "--- $1 ($2): $n tests not selected (GIT_TESTS_RUN / GIT_SKIP_TESTS)"
    fi
done
echo "total: $total_pass passed, $total_fail failed, $total_skip skipped in" \
     "${#runs[@]} runs, $(( SECONDS - START ))s, JOBS=$JOBS: $([[ $status -eq 0 ]] && echo ok || echo FAIL)"
log "logs and verbose output: $OUT"
exit $status
