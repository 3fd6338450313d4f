"""data_gen's refs-real-shaped preset: deterministic, and shaped as it says."""
from __future__ import annotations

import data_gen
from gitbin import GitRunner


def test_real_shaped_is_deterministic_and_shaped(tmp_path) -> None:
    a = data_gen.build("refs-real-shaped", root=tmp_path / "a", refs=200, commits=30)
    b = data_gen.build("refs-real-shaped", root=tmp_path / "b", refs=200, commits=30)
    assert a.manifest["facts"] == b.manifest["facts"]
    git = GitRunner()
    refs = git.out(["--git-dir", str(a.gitdir), "for-each-ref",
                    "--format=%(refname) %(objecttype) %(upstream)"]).decode().splitlines()
    assert len(refs) == a.manifest["facts"]["ref_count"] == 201
    kinds = {p: sum(1 for r in refs if r.startswith(p)) for p in
             ("refs/heads/", "refs/remotes/", "refs/tags/v", "refs/tags/light-")}
    assert kinds == {"refs/heads/": 91, "refs/remotes/": 51, "refs/tags/v": 40,
                     "refs/tags/light-": 19}
    assert all(" tag " in r + " " for r in refs if r.startswith("refs/tags/v"))
    assert "refs/heads/main commit refs/remotes/origin/main" in refs
    msgs = git.out(["--git-dir", str(a.gitdir), "log", "--format=%B%x00", "main"]).split(b"\0")
    assert any(b"Signed-off-by: " in m for m in msgs) and any(b"\n\n" in m for m in msgs)
