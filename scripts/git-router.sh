# Sourced by scripts/git-tests.sh and scripts/git-perf.sh: the one router that puts
# reftable-lab in place of git for the commands the lab implements.
#
# write_git_router OUT LAB REAL [FLAGS] writes an executable sh script OUT: run as
# `git [global options] CMD ...`, it execs LAB with the same arguments when CMD is one of
# $GIT_ROUTER_COMMANDS (default: show-ref update-ref refs for-each-ref), and REAL (the real
# git or its wrapper) otherwise. git's global options that take a value (-C, -c, --git-dir,
# ...) are skipped when looking for CMD. PYTHONPATH, if set, is kept in the router;
# FLAGS (and REFTABLE_LAB_FLAGS after it: the user's last, it wins) become the lab's
# REFTABLE_LAB_FLAGS. The file is written beside OUT and moved into place.
GIT_ROUTER_MARK="# reftable-lab git-tests router"   # the name git-tests.sh has always used
GIT_ROUTER_COMMANDS=${GIT_ROUTER_COMMANDS:-show-ref update-ref refs for-each-ref}

git_router_quote() { printf "'%s'" "${1//\'/\'\\\'\'}"; }   # a shell-quoted word

write_git_router() {  # $1 = OUT, $2 = LAB, $3 = REAL, $4 = FLAGS (optional)
    local out=$1 lab=$2 real=$3 flags="${4:-}${REFTABLE_LAB_FLAGS:+,$REFTABLE_LAB_FLAGS}"
    flags=${flags#,}
    {
        echo "#!/bin/sh"
        echo "$GIT_ROUTER_MARK (scripts/git-router.sh): ${GIT_ROUTER_COMMANDS// /, } go to reftable-lab"
        [[ -n "${PYTHONPATH:-}" ]] && echo "PYTHONPATH=$(git_router_quote "$PYTHONPATH"); export PYTHONPATH"
        [[ -n "$flags" ]] && echo "REFTABLE_LAB_FLAGS=$(git_router_quote "$flags"); export REFTABLE_LAB_FLAGS"
        cat <<EOF
skip=
for a do
	if test -n "\$skip"; then skip=; continue; fi
	case "\$a" in
	-C|-c|--git-dir|--work-tree|--namespace|--super-prefix|--attr-source) skip=1 ;;
	-*) ;;
	${GIT_ROUTER_COMMANDS// /|}) exec $(git_router_quote "$lab") "\$@" ;;
	*) break ;;
	esac
done
exec $(git_router_quote "$real") "\$@"
EOF
    } >"$out.tmp"
    chmod +x "$out.tmp"
    mv "$out.tmp" "$out"
}
