"""git's reftable format and its layers: records, blocks, tables, merged iteration, the stack.

This package knows nothing of refs semantics (refname rules, backends); those live in
reftable_core.refs, on top of it.
"""
