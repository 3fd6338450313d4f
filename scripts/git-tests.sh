#!/usr/bin/env bash
# Run git's own ref tests with reftable-lab in place of `git show-ref` and
# `git update-ref`.
#
# The built source tree of the provisioned git (scripts/provision-git.sh
# --source: fetched and built once into the cache, then reused) provides t/.
# For the duration of the run its bin-wrappers/git (the `git` the tests call) is
# replaced by a plain router: `git [global options] show-ref|update-ref ...`
# runs reftable-lab with the same arguments, everything else the real git
# wrapper. git's internal calls use GIT_EXEC_PATH and never pass through it. No
# test is edited, skipped or special-cased; a trap restores the wrapper.
#
# Runs t1403-show-ref, t1400-update-ref, t1404-update-ref-errors and
# t1416-ref-transaction-hooks with GIT_TEST_DEFAULT_REF_FORMAT=files and
# =reftable, and t0610-reftable-basics (reftable only), JOBS at a time (default
# 2), each under a TIMEOUT (seconds, default 2400). Prints the passes per script
# and format from the TAP output and the failing tests; exits non-zero when a
# test fails, a script does not finish, or its plan is not met.
#
# Environment: REFTABLE_LAB_BIN (default <project>/.venv/bin/reftable-lab),
# JOBS, TIMEOUT, GIT_TESTS_OUT (folder for the logs; default a new temporary
# one, kept), GIT_TESTS (the scripts, default the five above; "t1403 t0610"
# works too), GIT_TESTS_RUN (git's --run=<selection> for every script, e.g.
# "99,147,173"; a partial run's plan counts the tests not selected as skipped). PYTHONPATH and REFTABLE_LAB_FLAGS, if set, reach reftable-lab.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LAB=${REFTABLE_LAB_BIN:-$ROOT/.venv/bin/reftable-lab}
JOBS=${JOBS:-2}
TIMEOUT=${TIMEOUT:-2400}
RUN=${GIT_TESTS_RUN:-}
TESTS=${GIT_TESTS:-t1403-show-ref t1400-update-ref t1404-update-ref-errors t1416-ref-transaction-hooks t0610-reftable-basics}
MARK="# reftable-lab git-tests router"

log() { echo "git-tests: $*" >&2; }

[[ -x "$LAB" ]] || { log "error: no reftable-lab at $LAB (make setup, or set REFTABLE_LAB_BIN)"; exit 2; }
SRC=$(bash "$ROOT/scripts/provision-git.sh" --source | tail -n 1)
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

q() { printf "'%s'" "${1//\'/\'\\\'\'}"; }   # a shell-quoted word
{
    echo "#!/bin/sh"
    echo "$MARK (scripts/git-tests.sh): show-ref and update-ref go to reftable-lab"
    [[ -n "${PYTHONPATH:-}" ]] && echo "PYTHONPATH=$(q "$PYTHONPATH"); export PYTHONPATH"
    [[ -n "${REFTABLE_LAB_FLAGS:-}" ]] && echo "REFTABLE_LAB_FLAGS=$(q "$REFTABLE_LAB_FLAGS"); export REFTABLE_LAB_FLAGS"
    cat <<EOF
skip=
for a do
	if test -n "\$skip"; then skip=; continue; fi
	case "\$a" in
	-C|-c|--git-dir|--work-tree|--namespace|--super-prefix|--attr-source) skip=1 ;;
	-*) ;;
	show-ref|update-ref) exec $(q "$LAB") "\$@" ;;
	*) break ;;
	esac
done
exec $(q "$PRISTINE") "\$@"
EOF
} >"$WRAPPER.tmp"
chmod +x "$WRAPPER.tmp"
mv "$WRAPPER.tmp" "$WRAPPER"

# --- the runs ----------------------------------------------------------------
runs=()
for t in $TESTS; do
    script=$(cd "$SRC/t" && ls "$t"*.sh 2>/dev/null | head -n 1) || true
    [[ -n "$script" ]] || { log "error: no test script $t in $SRC/t"; exit 2; }
    name=${script%.sh}
    if [[ "$name" == t0610-* ]]; then runs+=("$name reftable"); else
        runs+=("$name files" "$name reftable"); fi
done

run_one() {  # $1 = script name, $2 = ref format; writes $OUT/<name>.<format>.{tap,status}
    local name=$1 fmt=$2 dir="$OUT/$1.$2" rc=0
    mkdir -p "$dir"
    (cd "$SRC/t" && GIT_TEST_DEFAULT_REF_FORMAT=$fmt TEST_OUTPUT_DIRECTORY="$dir" \
        timeout -k 10 "$TIMEOUT" sh "./$name.sh" --verbose-log --root="$dir" ${RUN:+"--run=$RUN"} \
        >"$dir.tap" 2>"$dir.err" </dev/null) || rc=$?
    echo "$rc" >"$dir.status"
}
export -f run_one
export SRC OUT TIMEOUT RUN
log "running ${#runs[@]} test scripts from $SRC/t, $JOBS at a time (logs: $OUT)"
printf '%s\n' "${runs[@]}" | xargs -P "$JOBS" -L 1 bash -c 'run_one "$0" "$1"'

# --- the counts --------------------------------------------------------------
status=0
printf '%-32s %-9s %5s %5s %5s %5s  %s\n' script format pass fail skip plan result
for r in "${runs[@]}"; do
    set -- $r
    tap="$OUT/$1.$2.tap"
    rc=$(cat "$OUT/$1.$2.status")
    pass=$(grep -E '^ok [0-9]+( |$)' "$tap" | grep -vc '# skip' || true)
    skip=$(grep -cE '^ok [0-9]+ # skip' "$tap" || true)
    fail=$(grep -E '^not ok [0-9]+' "$tap" | grep -vc '# TODO' || true)
    plan=$(sed -n 's/^1\.\.\([0-9]*\).*/\1/p' "$tap" | tail -n 1)
    if [[ $rc -eq 124 || $rc -eq 137 ]]; then result="timed out after ${TIMEOUT}s"
    elif [[ -z "$plan" ]]; then result="no plan (exit $rc)"
    elif [[ $rc -ne 0 || $fail -ne 0 ]]; then result="FAIL (exit $rc)"
    elif (( pass + skip != plan )); then result="plan not met"
    else result=ok; fi
    [[ $result == ok ]] || status=1
    printf '%-32s %-9s %5s %5s %5s %5s  %s\n' "$1" "$2" "$pass" "$fail" "$skip" "${plan:--}" "$result"
done
for r in "${runs[@]}"; do
    set -- $r
    if grep -qE '^not ok [0-9]+' "$OUT/$1.$2.tap"; then
        echo "--- $1 ($2): failing tests"
        grep -E '^not ok [0-9]+' "$OUT/$1.$2.tap" | grep -v '# TODO' || true
    fi
    if grep -qE '^ok [0-9]+ # skip' "$OUT/$1.$2.tap"; then
        echo "--- $1 ($2): skipped by git's prerequisites"
        grep -E '^ok [0-9]+ # skip' "$OUT/$1.$2.tap"
    fi
done
log "logs and verbose output: $OUT"
exit $status
