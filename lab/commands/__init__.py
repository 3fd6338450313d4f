"""The reftable-lab subcommands, one module per command (lab.cli.COMMANDS maps
names to modules): show_ref, for_each_ref, update_ref, dump, gen, bench, odb, flags. Shared by
the commands that mimic git: parseopt (git's option rules), gitlike (die,
repository opening, ref resolver), quote (C-style quoting), wildmatch (git's
ref pattern globbing)."""
