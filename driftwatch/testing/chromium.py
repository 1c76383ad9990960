"""Headless Chromium for browser tests, as a fixture factory (Playwright drives the system
browser; it downloads none).

Needs the Debian ``chromium`` package (``make system-deps``) and Playwright for Python (the
``dev`` extra). Without the browser the fixture skips, or fails when ``$CI`` is set.

In a ``conftest.py``::

    browser = browser_fixture(scope="session")

and in a test, :func:`open_page` gives the page with the console problems and the URLs it
fetched, so a test can require a page that renders cleanly and offline.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "browser_fixture", "open_page"]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def browser_fixture(scope: str = "session") -> Any:
    """A fixture yielding a launched Playwright ``Browser`` for the scope."""

    @pytest.fixture(scope=scope)  # type: ignore[call-overload]
    def browser() -> Iterator[Any]:
        if not CHROMIUM.exists():
            msg = f"{CHROMIUM} not found: run `make system-deps` (Debian package chromium)"
            if os.environ.get("CI"):
                pytest.fail(msg)
            pytest.skip(msg)
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            yield b
            b.close()

    return browser


def open_page(browser: Any, url: str) -> tuple[Any, list[str], list[str]]:
    """``(page, problems, fetched)``: console errors and warnings and page errors seen
    while ``url`` loaded, and every URL the page requested."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    fetched: list[str] = []
    page.on(
        "console",
        lambda m: (
            problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None
        ),
    )
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("request", lambda r: fetched.append(r.url))
    page.goto(url, wait_until="load")
    return page, problems, fetched
