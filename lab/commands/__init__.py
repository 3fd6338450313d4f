"""The lab's own subcommands, one module per command (lab.cli.COMMANDS maps names to
modules): bench (with compare, report, profile), dump, gen, flags, history, speed, bisect. The
git-like commands (show-ref, for-each-ref, update-ref, refs, odb) are
reftable_core.builtin's."""
