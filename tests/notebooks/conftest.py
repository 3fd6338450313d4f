"""The browser test's artifacts (notebook copies, screenshots) are never collected:
nbmake would otherwise run every copied .ipynb under tests/notebooks/artifacts/."""
collect_ignore_glob = ["artifacts/*"]
