"""Run reftable-lab in-process (fast) or as a subprocess, capturing bytes."""
from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from lab.cli import main

REPO_ROOT = Path(__file__).resolve().parents[2]


class _KeepOpen(io.BytesIO):
    def close(self) -> None:        # the TextIOWrapper must not close it
        pass


def run_lab(args: Sequence[str], cwd: str | os.PathLike[str] | None = None,
            stdin: bytes = b"") -> tuple[int, bytes, bytes]:
    """(status, stdout, stderr) of `reftable-lab args` run in this process."""
    out, err = _KeepOpen(), _KeepOpen()
    o_in, o_out, o_err = sys.stdin, sys.stdout, sys.stderr
    old_cwd = os.getcwd()
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
    sys.stdout = io.TextIOWrapper(out, write_through=True)
    sys.stderr = io.TextIOWrapper(err, write_through=True)
    try:
        if cwd is not None:
            os.chdir(cwd)
        try:
            status = main(list(args))
        except SystemExit as e:
            status = int(e.code or 0)
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os.chdir(old_cwd)
        sys.stdin, sys.stdout, sys.stderr = o_in, o_out, o_err
    return status, out.getvalue(), err.getvalue()


def run_lab_proc(args: Sequence[str], cwd: str | os.PathLike[str] | None = None,
                 stdin: bytes = b"", env: Mapping[str, str] | None = None) -> tuple[int, bytes, bytes]:
    proc = subprocess.run([sys.executable, "-m", "lab.cli", *args], cwd=cwd, input=stdin,
                          capture_output=True, env=dict(env) if env is not None else None,
                          check=False)
    return proc.returncode, proc.stdout, proc.stderr
