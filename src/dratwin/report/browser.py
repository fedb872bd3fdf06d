"""Load a report in headless Chromium, offline, and read back what the page says it drew.

Chromium runs with every host name unresolvable (``--host-resolver-rules``), so a page that needs the
network fails here. ``--virtual-time-budget`` lets the page's timers and promises run before the DOM is
dumped; the page's ``<output id="dratwin-render-status">`` then holds the plots it was given, the plots
that rendered an SVG, the errors it caught and the milliseconds it took. Every console message Chromium
logged is kept too (``console_messages``): a clean page logs none.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from html.parser import HTMLParser
from pathlib import Path

import msgspec

STATUS_ID = "dratwin-render-status"
_CONSOLE = re.compile(r":CONSOLE[:(]\d+\)?\] (.*)")


class PageCheck(msgspec.Struct, frozen=True, kw_only=True):
    """What one load of a page showed."""

    state: str
    plots: int
    rendered: int
    errors: tuple[str, ...]
    console_messages: tuple[str, ...]
    render_ms: int
    since_navigation_ms: int
    wall_s: float

    @property
    def ok(self) -> bool:
        return self.state == "done" and self.plots == self.rendered and not self.errors and not self.console_messages


class BrowserError(RuntimeError):
    """Chromium could not be run, or it returned no page."""


def find_chromium() -> str | None:
    """``DRATWIN_CHROMIUM`` when set, else the first Chromium on PATH."""
    named = os.environ.get("DRATWIN_CHROMIUM")
    if named:
        return named
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class _StatusReader(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.attributes: dict[str, str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if values.get("id") == STATUS_ID:
            self.attributes = values


def check_page(page: Path, chromium: str, budget_ms: int = 20000, timeout_s: float = 180) -> PageCheck:
    """Load ``page`` and report what it drew. Raises ``BrowserError`` when Chromium gives no page back."""
    with tempfile.TemporaryDirectory(prefix="dratwin-chromium-") as profile:
        command = [
            chromium,
            "--headless",
            "--no-sandbox",  # the check runs as root in CI, where Chromium's sandbox refuses to start
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            f"--user-data-dir={profile}",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            f"--virtual-time-budget={budget_ms}",
            "--window-size=1280,2000",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
            page.resolve().as_uri(),
        ]
        started = time.perf_counter()
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, check=False)
        except (OSError, subprocess.TimeoutExpired) as failure:
            raise BrowserError(f"{chromium}: could not load {page}: {failure}") from failure
        wall_s = time.perf_counter() - started
    reader = _StatusReader()
    reader.feed(done.stdout)
    if reader.attributes is None:
        tail = done.stderr.strip().splitlines()[-5:]
        raise BrowserError(f"{chromium} returned no page for {page} (exit status {done.returncode}): {tail}")
    status = reader.attributes
    return PageCheck(
        state=status.get("data-state", ""),
        plots=int(status.get("data-plots") or 0),
        rendered=int(status.get("data-rendered") or 0),
        errors=tuple(json.loads(status.get("data-errors") or "[]")),
        console_messages=tuple(m.group(1) for m in map(_CONSOLE.search, done.stderr.splitlines()) if m),
        render_ms=int(status.get("data-ms") or 0),
        since_navigation_ms=int(status.get("data-since-navigation") or 0),
        wall_s=round(wall_s, 3),
    )
