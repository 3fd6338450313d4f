"""Ref storage on top of the formats: refname rules, the RefStore protocol, transactions,
loose refs, packed-refs, the files backend and the reftable backend.
"""
