"""git's ref-filter (ref-filter.c), one module per concern: atom (the protocol every
atom implements), format (the format parser: literals, atoms, %(align), %(if)...),
object_atoms (atoms that read an object: contents, people and dates, tree/parent...),
ref_atoms (atoms of the ref itself: refname, symref, HEAD, upstream/push...),
quoting (--shell/--perl/--python/--tcl), filters (patterns, --exclude, --points-at,
--merged/--contains, --include-root-refs), sort (--sort keys and git's comparison)."""
