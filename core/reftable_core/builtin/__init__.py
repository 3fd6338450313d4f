"""git's commands, on top of repo, refs and odb, as git keeps builtin/ apart from its
libraries: show_ref, for_each_ref, update_ref, refs (migrate) and odb (log-raw, log-S,
cat-file), with what they share (gitlike: dying like git, opening the repository as git
finds it; parseopt: git's option rules; quote: C-style quoting; wildmatch: git's ref
pattern globbing). Stdlib only, like the rest of the core, and compiled with it.

A command module defines GIT_COMMAND = (name, help, function(argv, flags, out) -> status)
and/or register(sub, add_flag_options) for an argparse front end; `reftable-lab`
(lab.cli) dispatches to them."""
