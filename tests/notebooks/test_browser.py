"""The notebooks as a person uses them: JupyterLab in headless Debian chromium.

Contract: starts JupyterLab on 127.0.0.1 (a free port, a token, fresh settings:
no autosave, every cell kept in the DOM), opens a copy of each notebook (the
committed files are never written), runs all cells and asserts: no output holds
a traceback, the flag picker renders as ipywidgets DOM elements (not their text
repr), every plot is a decoded image, and toggling a flag and pressing Run
replaces the quick look's and the chosen benchmark's figures with different ones.
Screenshots go to tests/notebooks/artifacts/<time>/ (git-ignored; the path is
printed), among them each seed notebook's picker after a toggle and Run and its
seed-beside-lab plot. Needs /usr/bin/chromium (`make browser` installs it with
apt; when apt cannot, it writes why to .venv/chromium-unavailable and only then
do these tests skip, with that reason) and Playwright's Python package (the test
extras); Playwright never downloads a browser here. `make test` runs them in a
pytest process of their own, after the others (one JupyterLab, one chromium).
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
CHROMIUM = Path("/usr/bin/chromium")
NO_CHROMIUM = ROOT / ".venv" / "chromium-unavailable"     # written by `make browser`
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
# notebook -> the checkbox the toggle test unticks (a flag its quick look times)
TOGGLE = {"00-tour.ipynb": "pq_cmp", "01-seed000-reftable-iteration.ipynb": "merged_cmp",
          "02-seed001-packed-refs.ipynb": "mmap", "03-seed002-delta-base-cache.ipynb": "mmap",
          "04-seed003-block-type-early-exit.ipynb": "block_type_early_exit",
          "05-seed004-io-patterns.ipynb": "stat_cache"}
SETTINGS = {  # JupyterLab user settings: nothing written back, nothing fetched, no windowing
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false",
                                                    "checkForUpdates": False},
}
CELL_TIMEOUT_S = 600


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def artifacts() -> Path:
    out = ROOT / "tests" / "notebooks" / "artifacts" / time.strftime("%Y%m%d-%H%M%S")
    (out / "notebooks").mkdir(parents=True)
    for nb in NOTEBOOKS.glob("*.ipynb"):       # kernels start here; ROOT is found above
        shutil.copy(nb, out / "notebooks" / nb.name)
    print(f"\nbrowser test artifacts: {out}")
    return out


@pytest.fixture(scope="module")
def lab_url(artifacts: Path) -> Iterator[str]:
    if not CHROMIUM.exists():
        if NO_CHROMIUM.exists():
            pytest.skip(f"chromium is not installable here: {NO_CHROMIUM.read_text().strip()}")
        pytest.fail(f"{CHROMIUM} is missing: run `make browser` (apt-get install chromium)")
    settings = artifacts / "settings"
    for plugin, values in SETTINGS.items():
        path = settings / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    port, token = _free_port(), secrets.token_hex(16)
    log = (artifacts / "jupyter.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root", "--ip=127.0.0.1",
         f"--port={port}", f"--IdentityProvider.token={token}",
         f"--ServerApp.root_dir={artifacts / 'notebooks'}",
         f"--LabApp.user_settings_dir={settings}",
         f"--LabApp.workspaces_dir={artifacts / 'workspaces'}"],
        stdout=log, stderr=subprocess.STDOUT, env={
            **os.environ, "JUPYTER_RUNTIME_DIR": str(artifacts / "runtime"),
            # the notebooks' dataset and results folders: apart from nbmake's (which may run
            # at the same time), kept from one browser run to the next (datasets cached)
            "REFTABLE_LAB_NB_DIR": str(artifacts.parent / "lab"),
            "JUPYTER_CONFIG_DIR": str(artifacts / "config"),
            "PYTHONPATH": os.pathsep.join([str(ROOT / "core"), str(ROOT),
                                           os.environ.get("PYTHONPATH", "")])})
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if proc.poll() is not None:
                    pytest.fail(f"jupyter lab exited: {(artifacts / 'jupyter.log').read_text()}")
                time.sleep(0.5)
        else:
            pytest.fail("jupyter lab did not answer within 120 s")
        # a workspace per notebook, reset: no tab of an earlier notebook is restored
        yield f"{base}/lab/workspaces/{{0}}/tree/{{0}}.ipynb?reset&token={token}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="module")
def browser(artifacts: Path) -> Iterator[object]:
    with sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            str(artifacts / "chromium-profile"), executable_path=str(CHROMIUM),
            headless=True, args=CHROMIUM_ARGS, viewport={"width": 1400, "height": 1000})
        try:
            yield ctx
        finally:
            ctx.close()


def _outputs_text(page: object) -> str:
    return page.evaluate("""() => [...document.querySelectorAll('.jp-OutputArea-output')]
        .map(e => e.innerText).join('\\n')""")


def _wait_all_run(page: object) -> None:
    """Until every code cell shows an execution count (none pending: '[*]' or '[ ]')."""
    started = time.time()
    deadline = started + CELL_TIMEOUT_S * 3
    prompts: list[str] = []
    page.wait_for_timeout(1000)
    while time.time() < deadline:
        prompts = page.evaluate("""() => [...document.querySelectorAll(
            '.jp-Notebook .jp-CodeCell .jp-InputArea-prompt')].map(e => e.innerText.trim())""")
        if prompts and all(p[1:-2].strip().isdigit() for p in prompts):
            return
        if time.time() > started + 60 and all(p[1:-2].strip() == "" for p in prompts):
            raise AssertionError(f"Run All started nothing within 60 s: {prompts}")
        page.wait_for_timeout(1000)
    raise AssertionError(f"cells still running after {CELL_TIMEOUT_S * 3} s: {prompts}")


def _kernel_idle(page: object) -> None:
    """Until the status bar reads the Python kernel as idle (started and connected); a
    kernel-choice dialog is answered with its default (the notebook's own kernel)."""
    deadline = time.time() + 180
    while time.time() < deadline:
        dialog = page.locator(".jp-Dialog .jp-Dialog-button.jp-mod-accept")
        if dialog.count():
            dialog.first.click()
        if page.locator("#jp-main-statusbar", has_text="ipykernel) | Idle").count():
            page.wait_for_timeout(1000)
            return
        page.wait_for_timeout(500)
    raise AssertionError("the notebook's kernel did not start within 180 s")


def _image_sources(locator: object) -> list[str]:
    return locator.evaluate_all("els => els.map(e => e.src)")


def _run_all(page: object) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator('.lm-Menu-item[data-command="runmenu:run-all"]').click()


@pytest.mark.parametrize("name", sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")))
def test_notebook_in_browser(name: str, lab_url: str, browser: object, artifacts: Path
                             ) -> None:
    shots = artifacts / "screenshots"
    shots.mkdir(exist_ok=True)
    stem = name.removesuffix(".ipynb")
    page = browser.new_page()
    try:
        page.goto(lab_url.format(stem))
        page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=120_000)
        _kernel_idle(page)
        _run_all(page)
        _wait_all_run(page)
        page.screenshot(path=str(shots / f"{stem}-all-run.png"))
        text = _outputs_text(page)
        assert "Traceback" not in text, f"{name}: a cell output holds a traceback:\n{text}"
        assert page.locator(".jp-OutputArea-output [data-mime-type="
                            "'application/vnd.jupyter.stderr'] .ansi-red-fg").count() == 0

        images = page.locator(".jp-OutputArea-output img")
        for i in range(images.count()):            # every plot is a decoded image
            assert images.nth(i).evaluate("e => e.complete && e.naturalWidth > 0"), \
                f"{name}: image {i} did not decode"
        if name not in TOGGLE:
            return
        # the picker is ipywidgets DOM, not a text repr
        assert not any(r in text for r in ("FlagPicker(", "VBox(children", "Panel(")), text
        assert page.locator(".jp-OutputArea-output .widget-checkbox input").count() >= 8
        run = page.locator(".jupyter-widgets button", has_text="Run")
        assert run.count() == 1
        panel = page.locator(".jp-OutputArea-output .widget-vbox").filter(has=run).first
        quick = page.locator(".jp-Cell").filter(has_text="lab.quick_look()").locator(
            ".jp-OutputArea-output img")
        bench = page.locator(".jp-Cell").filter(has_text="lab.bench(").first.locator(
            ".jp-OutputArea-output img")
        # the bench cell: the lab's plot and the seed-beside-lab plot
        assert quick.count() == 1 and bench.count() == 2, (quick.count(), bench.count())
        before_quick, before_bench = _image_sources(quick), _image_sources(bench)

        box = page.locator(".widget-checkbox").filter(has_text=TOGGLE[name]).locator("input")
        assert box.count() == 1, TOGGLE[name]
        box.check() if not box.is_checked() else box.uncheck()
        run.click()
        status = panel.locator(".widget-html")
        status.filter(has_text="done in").wait_for(timeout=CELL_TIMEOUT_S * 1000)
        panel.screenshot(path=str(shots / f"{stem}-picker-after-run.png"))
        quick.first.screenshot(path=str(shots / f"{stem}-quick-look.png"))
        bench.first.screenshot(path=str(shots / f"{stem}-bench-plot.png"))
        bench.nth(1).screenshot(path=str(shots / f"{stem}-seed-beside-lab.png"))
        page.locator(".jp-Cell").filter(has_text="lab.bench(").first.locator(
            ".jp-Cell-outputArea").screenshot(path=str(shots / f"{stem}-bench-output.png"))
        assert "Traceback" not in _outputs_text(page)
        assert _image_sources(quick) != before_quick, f"{name}: the quick look did not change"
        assert _image_sources(bench) != before_bench, f"{name}: the bench plot did not change"
    finally:
        page.close()
        _shut_down_kernels(lab_url)


def _shut_down_kernels(lab_url: str) -> None:
    """Every kernel of the server, so one notebook's kernel does not outlive its test."""
    base, token = lab_url.split("/lab/")[0], lab_url.rsplit("token=", 1)[1]
    headers = {"Authorization": f"token {token}"}
    with urllib.request.urlopen(urllib.request.Request(f"{base}/api/kernels",
                                                       headers=headers)) as r:
        kernels = json.load(r)
    for k in kernels:
        urllib.request.urlopen(urllib.request.Request(f"{base}/api/kernels/{k['id']}",
                                                      method="DELETE", headers=headers))
