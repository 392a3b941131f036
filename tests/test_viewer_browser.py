"""The viewer in a real browser: Debian's Chromium, headless, driven by Playwright, against a
daemon process watching a git work tree, fed by the real hook shim and CLI.

A person's way through it: the timeline (and a new capture arriving while it is open), a
search, a record, its chain followed both ways, the conflicts and status pages, forgetting one
record and restoring it, superseding another, accepting a review item, the audit page; then the
same pages with JavaScript off. Each page's
screenshot is written under the test's tmp folder (the path is printed);
``LINTAID_VIEWER_SCREENSHOT=docs/viewer-record.png`` also copies the record page's there.

Skipped, with the reason, where Playwright or the browser cannot be had (``.ci/run`` installs
both: Chromium with apt, Playwright with the test extra; never ``playwright install``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lintaid_client import paths
from tests import viewer_scene as vs
from tests.conftest import daemon_process, lintaid_env, run_cli, run_json, wait_for

pytestmark = pytest.mark.slow

CHROMIUM = os.environ.get("LINTAID_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
WAIT_MS = 20_000  # a bound on a condition, not a claim about speed
VIEWPORT = {"width": 1280, "height": 900}
# Every element of a status card that reaches past the card's right edge (none should).
OVERFLOWING = """() => [...document.querySelectorAll('.panel')].flatMap(card => {
  const edge = card.getBoundingClientRect().right + 0.5;
  return [...card.querySelectorAll('*')]
    .filter(e => e.getBoundingClientRect().right > edge)
    .map(e => card.id + ': ' + e.tagName.toLowerCase() + ' ' + e.textContent.slice(0, 60));
}).concat(document.documentElement.scrollWidth > window.innerWidth ? ['the page'] : [])"""


@pytest.fixture
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError as err:
        pytest.skip(f"the browser tests need Playwright (pip install -e '.[test]'): {err}")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"the browser tests need Chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_playwright() as driver:
        try:
            chromium = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        except Error as err:
            pytest.skip(f"Chromium at {CHROMIUM} did not start: {err}")
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def scene(tmp_path: Path) -> Iterator[vs.Scene]:
    root = tmp_path / "payments-gateway"
    root.mkdir()
    paths.ensure_state_dir(root)
    vs.prepare_tree(root)
    env = lintaid_env(LINTAID_NO_WATCH="0")
    process = daemon_process(root, env)
    try:
        wait_for(lambda: run_json(root, "status", env=env).get("workspace", {}).get("ready"), 60)
        yield vs.build(vs.Scene(root, env))
    finally:
        process.stop()


def _ids(page: Any, selector: str) -> list[str]:
    return [href.rsplit("/record/", 1)[1] for href in
            page.eval_on_selector_all(selector, "els => els.map(e => e.getAttribute('href'))")]


@pytest.mark.timeout(300)
def test_a_person_reads_and_changes_memory_in_the_browser(browser: Any, scene: vs.Scene,
                                                          tmp_path: Path) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=WAIT_MS)
    root, env = scene.root, scene.env
    capture = vs.capture_id(scene)
    vs.edit_after_capture(scene)
    url = json.loads(run_cli(root, "ui", "--no-open", "--json", env=env).stdout)["url"]
    shots = tmp_path / "screenshots"
    shots.mkdir()
    page = browser.new_page(viewport=VIEWPORT)

    def shot(name: str) -> Path:
        path = shots / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    # The timeline: sessions by client, and a capture arriving while it is open.
    page.goto(url)
    expect(page.locator(".session-head .client")).to_contain_text(
        ["codex", "claude-code", "no agent client"])
    expect(page.locator("#timeline")).to_have_attribute("data-connected", "1")
    page.evaluate("window.stayed = true")
    vs.add(scene, "Deploys go through Argo CD since the June migration.")
    expect(page.locator("#timeline")).to_contain_text("Deploys go through Argo CD")
    assert page.evaluate("window.stayed") is True  # updated in place, not reloaded
    # A captured turn is titled by its request, with what was decided beside it.
    row = page.locator(f".row[data-id='{capture}']")
    expect(row.locator("a.rec")).to_have_text(vs.SWITCH_REQUEST)
    expect(row.locator(".decided")).to_have_text(
        "The gateway uses httpx instead of requests for HTTP calls.")
    shot("timeline")

    # Search: the CLI's ranking, the words marked; history brings the retired note back.
    page.fill("header input[name=q]", "gateway http client")
    page.press("header input[name=q]", "Enter")
    expect(page.locator("#summary")).to_contain_text("hit")
    cli = run_json(root, "search", "gateway http client", "--top-k", "10", env=env)["results"]
    assert _ids(page, ".hit-head a.rec") == [h["id"] for h in cli if h["store"] == "memory"]
    assert page.locator("pre.excerpt mark").count() > 0
    assert scene.old_note not in _ids(page, ".hit-head a.rec")
    page.check("input[name=history]")
    page.click("form.search button[type=submit]")
    expect(page.locator(".badge", has_text="historical")).to_have_count(1)
    assert scene.old_note in _ids(page, ".hit-head a.rec")
    shot("search")

    # A record: claims, the chain it sits on, provenance, the file it named, its audit trail.
    page.click(f".hit-head a.rec[href$='/record/{capture}']")
    expect(page.locator("h1")).to_contain_text("Switch the gateway's HTTP client to httpx")
    chain = page.locator("#chains")
    expect(chain).to_contain_text("requests")
    expect(chain).to_contain_text("supersedes by httpx (transition, confidence 0.95)")
    expect(page.locator("#provenance")).to_contain_text("claude-code")
    expect(page.locator("#provenance")).to_contain_text("the current revision")
    expect(page.locator("#files")).to_contain_text("gateway/client.py changed since capture")
    expect(page.locator("#audit")).to_contain_text("hook:claude-code")
    record_shot = shot("record")
    target = os.environ.get("LINTAID_VIEWER_SCREENSHOT")
    if target:
        shutil.copyfile(record_shot, target)

    # Follow the chain back to what it replaced, and forward again.
    page.click("#chains a.step-record")
    expect(page.locator("h1")).to_contain_text("The gateway uses requests for HTTP calls.")
    expect(page.locator(".record-head .badge")).to_have_text("superseded")
    shot("chain")
    page.click("#replaced-by")
    expect(page).to_have_url(re.compile(f"/record/{capture}$"))

    # Conflicts and status.
    page.click("nav >> text=Conflicts & review")
    expect(page.locator(".conflict")).to_contain_text("Dan owns the payments service")
    expect(page.locator(".conflict")).to_contain_text("Eve owns the payments service")
    shot("conflicts")
    # The status page at 1280x900, with an agent client installed (its long paths listed):
    # every card keeps its content inside it.
    run_cli(root, "install", "claude-code", env=env)
    page.click("nav >> text=Status")
    expect(page.locator("#stores")).to_contain_text("records")
    expect(page.locator("#watcher")).to_contain_text("files")
    expect(page.locator("#clients")).to_contain_text(str(root / ".claude" / "settings.json"))
    assert page.evaluate(OVERFLOWING) == []
    shot("status")
    run_cli(root, "uninstall", "claude-code", env=env)

    # Forget one record from its page: gone from the timeline, and from the CLI's view.
    page.goto(url + f"record/{scene.retry_note}")
    page.fill("input[name=reason]", "a value from a test run, never true")
    page.click("button[value=forget]")
    expect(page.locator(".notice")).to_contain_text(f"Forgotten {scene.retry_note}")
    expect(page.locator("#timeline")).not_to_contain_text("Gateway retry attempts: 3.")
    shot("forgotten")
    assert run_cli(root, "get", scene.retry_note, env=env, check=False).returncode != 0

    # Forgotten by mistake: the notice leads to its page, which restores it.
    page.click("#notice-link")
    expect(page.locator(".record-head .badge")).to_have_text("forgotten")
    expect(page.locator("#forgot")).to_contain_text("a value from a test run, never true")
    expect(page.locator("#content pre")).to_be_hidden()  # folded until asked for
    page.click("#content summary")
    expect(page.locator("#content pre")).to_have_text("Gateway retry attempts: 3.")
    shot("forgotten-record")
    page.fill("#actions input[name=reason]", "it was true after all")
    page.click("button[value=restore]")
    expect(page.locator(".notice")).to_contain_text(f"Restored {scene.retry_note}")
    expect(page.locator(".record-head .badge")).to_have_text("current")
    expect(page.locator("#audit")).to_contain_text("RESTORE")
    shot("restored")
    assert run_json(root, "get", scene.retry_note, env=env)["status"] == "current"
    found = run_json(root, "search", "gateway retry attempts", env=env)["results"]
    assert scene.retry_note in [h["id"] for h in found]

    # Settle the conflict: supersede the note with corrected text.
    page.goto(url + "conflicts")
    page.click(".conflict a[href$='#actions']")
    page.fill("textarea[name=content]", "Eve owns the payments service since May.")
    page.click("button[value=supersede]")
    expect(page.locator(".notice")).to_contain_text(
        f"{scene.owner_note} is superseded by this record")
    expect(page.locator("h1")).to_contain_text("Eve owns the payments service since May.")
    page.click("nav >> text=Conflicts & review")
    expect(page.locator("main")).to_contain_text("No unresolved conflicts.")
    history = run_json(root, "history", scene.owner_note, env=env)["results"]
    assert [(e["event"], e["actor"]) for e in history] == [("ADD", "cli"),
                                                           ("SUPERSEDE", "viewer")]

    # Two memories imported from mem0, stamped alike, disagree: a review item. Accept it.
    export = tmp_path / "mem0.json"
    export.write_text(json.dumps({"results": [
        {"id": "b1", "memory": "Carol owns the billing service.",
         "created_at": "2026-05-04T09:00:00Z"},
        {"id": "b2", "memory": "Frank owns the billing service.",
         "created_at": "2026-05-04T09:00:00Z"}]}))
    run_cli(root, "import", str(export), env=env)
    queue = run_json(root, "review", env=env)["results"]
    assert len(queue) == 1
    item, newer, older = (queue[0]["id"], queue[0]["newer"]["record_id"],
                          queue[0]["older"]["record_id"])
    page.reload()
    card = page.locator(f"#item-{item}")
    expect(card).to_contain_text("conflict: the two disagree")
    expect(card.locator(".side")).to_have_count(2)
    expect(card).to_contain_text("explicitly supersedes")
    shot("review")
    card.locator("input[name=reason]").fill("Frank took billing over in May")
    card.locator("button[value=accept]").click()
    expect(page.locator(".notice")).to_contain_text(
        f"Accepted {item}: {newer} now explicitly supersedes {older}")
    expect(page.locator(".review-item")).to_have_count(0)
    expect(page.locator("main")).to_contain_text("No unresolved conflicts.")
    shot("accepted")
    got = run_json(root, "get", older, env=env)
    assert got["status"] == "superseded" and got["superseded_by"] == newer
    owners = [h["id"] for h in run_json(root, "search", "billing service owner",
                                        env=env)["results"]]
    assert newer in owners and older not in owners
    page.click("#notice-link")  # the older memory's page says what replaced it
    expect(page.locator(".record-head .badge")).to_have_text("superseded")
    expect(page.locator("#replaced-by")).to_have_text(newer)

    # The audit page: the newest change first, the viewer's decision among them.
    page.click("nav >> text=Audit")
    expect(page.locator("table.audit tbody tr").first).to_contain_text("ACCEPT")
    page.fill("input[name=actor]", "viewer")
    page.click("form.filters button[type=submit]")
    expect(page.locator("table.audit td.actor")).not_to_have_count(0)
    actors = page.eval_on_selector_all("table.audit td.actor", "els => els.map(e => e.textContent)")
    assert set(actors) == {"viewer"}
    events = page.eval_on_selector_all("table.audit td.event",
                                       "els => els.map(e => e.textContent)")
    assert events[:2] == ["ACCEPT", "ACCEPT"] and "RESTORE" in events and "FORGET" in events
    shot("audit")

    # With JavaScript off, every page still reads.
    context = browser.new_context(java_script_enabled=False, viewport=VIEWPORT)
    page = context.new_page()
    page.goto(url)
    expect(page.locator("#timeline")).to_contain_text("Deploys go through Argo CD")
    page.goto(url + "search?q=gateway+http&history=1")
    expect(page.locator(".hit").first).to_be_visible()
    page.goto(url + f"record/{capture}")
    expect(page.locator("#chains")).to_contain_text("httpx")
    shot("record-without-javascript")
    context.close()
    print(f"\nviewer screenshots: {shots}")
