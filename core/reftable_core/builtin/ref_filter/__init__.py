"""git's ref-filter (ref-filter.c), one module per concern: atom (the protocol every
atom implements), format (the format parser: literals, atoms, %(align), %(if)...),
object_atoms (atoms of an object's header and raw bytes: tree, parent, tag fields, raw),
person_atoms (author, committer, tagger, creator and their dates), contents_atoms
(subject, body, contents) over trailers (trailer.c), signature_atoms, describe_atoms,
remote_atoms (upstream, push), ref_atoms (atoms of the ref itself: refname, symref, HEAD...),
quoting (--shell/--perl/--python/--tcl), filters (patterns, --exclude, --points-at,
--merged/--contains, --include-root-refs), sort (--sort keys and git's comparison)."""
