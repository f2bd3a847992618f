// End-to-end tests of the web client in headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core) against a real `unoflip serve`, which serves the committed page itself.
// Screenshots of the table are kept in test-output/.
//
// Needs the server binary (UNOFLIP_BIN, default ../../target/debug/unoflip: `cargo build`), openssl and
// Chromium (CHROMIUM, default /usr/bin/chromium: `apt-get install chromium`); without them every
// test says so loudly and is skipped. `.ci/run` provides both.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { chromium } from "playwright-core";

const AXE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

const here = dirname(fileURLToPath(import.meta.url));
const BIN = process.env.UNOFLIP_BIN ?? resolve(here, "../../../target/debug/unoflip");
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const OUT = resolve(here, "../test-output");
const missing = [
  existsSync(BIN) ? "" : `the server binary ${BIN} (run cargo build, or set UNOFLIP_BIN)`,
  existsSync(CHROMIUM) ? "" : `Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM)`,
].filter(Boolean);
if (missing.length) {
  // In CI nothing may be skipped: .ci/run installs what these tests need.
  if (process.env.CI) throw new Error(`the web client's browser tests need ${missing.join(" and ")}`);
  console.error(`\n!!! SKIPPING the web client's browser tests: missing ${missing.join(" and ")} !!!\n`);
}

/** A free TCP port on 127.0.0.1. */
function freePort() {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.on("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => ok(port));
    });
  });
}

/** A running `unoflip serve` on `port`, keeping its games in `store`. */
async function serve(port, store, extra = []) {
  const child = spawn(
    BIN,
    ["serve", "--listen", `127.0.0.1:${port}`, "--store", `sqlite:${store}`, "--bot-delay-ms", "60", ...extra],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let log = "";
  child.stderr.on("data", (d) => (log += d));
  const url = `http://127.0.0.1:${port}/`;
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(url)).ok) return { child, url, log: () => log };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill("SIGKILL");
  throw new Error(`the server did not start:\n${log}`);
}

async function stop(server) {
  if (server.child.exitCode !== null) return;
  const exited = new Promise((r) => server.child.once("exit", r));
  server.child.kill("SIGKILL");
  await exited;
}

const version = (page) => page.evaluate(() => document.body.dataset.version ?? "");

/** Clicks `locator`, then waits (a little) for the view to move on. The table changes under the
 * person's hand (bots play), so a button gone before the click is no failure: returns whether
 * the click happened. */
async function click(page, locator) {
  const before = await version(page);
  try {
    await locator.click({ timeout: 1000 });
  } catch {
    return false;
  }
  await page
    .waitForFunction((v) => (document.body.dataset.version ?? "") !== v, before, { timeout: 3000 })
    .catch(() => {});
  return true;
}

/** One move for the seat if it has one: a playable card (with a color for a wild), else another
 * listed action. Returns whether it acted. */
async function move(page) {
  const colors = page.locator("#colors button");
  if (await colors.count()) return click(page, colors.first());
  const playable = page.locator("#hand .card.playable");
  if (await playable.count()) {
    const card = playable.first();
    const wild = await card.evaluate((c) => c.classList.contains("c-wild")).catch(() => false);
    if (wild) {
      if (!(await card.click({ timeout: 1000 }).then(() => true, () => false))) return false;
    } else if (!(await click(page, card))) return false;
    const colorsNow = page.locator("#colors button");
    return (await colorsNow.count()) ? click(page, colorsNow.first()) : true;
  }
  for (const kind of ["keepCard", "acceptPenalty", "swapHands", "drawCard", "callUno", "challenge"]) {
    const button = page.locator(`#actions button[data-kind="${kind}"]`);
    if (await button.count()) return click(page, button.first());
  }
  return false;
}

/** One move with the keyboard only: Tab until what `move` would click has the focus, then
 * Enter. Returns whether it acted. */
async function keyMove(page) {
  let target = "";
  if (await page.locator("#colors button").count()) target = "#colors button";
  else if (await page.locator("#hand .card.playable").count()) target = "#hand .card.playable";
  else {
    for (const kind of ["keepCard", "acceptPenalty", "swapHands", "drawCard", "callUno", "challenge"]) {
      if (await page.locator(`#actions button[data-kind="${kind}"]`).count()) {
        target = `#actions button[data-kind="${kind}"]`;
        break;
      }
    }
  }
  if (!target) return false;
  const before = await version(page);
  for (let i = 0; i < 120; i++) {
    await page.keyboard.press("Tab");
    if (await page.evaluate((t) => document.activeElement?.matches(t) ?? false, target)) {
      await page.keyboard.press("Enter");
      if (target !== "#hand .card.playable" || !(await page.locator("#colors button").count())) {
        await page
          .waitForFunction((v) => (document.body.dataset.version ?? "") !== v, before, { timeout: 3000 })
          .catch(() => {});
      }
      return true;
    }
  }
  return false;
}

/** Opens the lobby and joins `game` from its list. */
async function joinFromLobby(page, url, game) {
  await page.goto(url);
  await page.waitForSelector("#lobby:not([hidden])");
  await page.click("#refresh");
  await page.click(`button.join[data-game="${game}"]`);
  await page.waitForSelector("#waiting:not([hidden])");
}

/** The ids of the cards in the seat's hand, as the page shows them. */
const handIds = (page) =>
  page.$$eval("#hand [data-card-id]", (cards) => cards.map((c) => c.getAttribute("data-card-id")).sort());

async function createGame(page, url, { seats, bots, singleRound = true, house = [], timer = 0, level = "heuristic" }) {
  await page.goto(url);
  await page.waitForSelector("#lobby:not([hidden])");
  await page.selectOption("#ruleset", "flip");
  await page.fill("#seats", String(seats));
  await page.fill("#bots", String(bots));
  await page.selectOption("#bot-level", level);
  if (singleRound) await page.check("#single-round");
  await page.fill("#timer", String(timer));
  for (const rule of house) await page.check(`input[name=house][value=${rule}]`);
  await page.click("#create");
  await page.waitForSelector("#waiting:not([hidden])");
  return decodeURIComponent(new URL(page.url()).hash.slice(1));
}

/** axe-core's serious and critical violations on the page at rest: a card arriving fades in, and
 * axe would judge its contrast half-way through the fade. Waiting for the running animations is not
 * enough, since a move may arrive (and a card start fading in) while axe runs, so motion is off
 * (reduced-motion emulation, which the page honours) while axe judges, then as it was before. */
async function accessibilityProblems(page) {
  const reduced = await page.evaluate(() => matchMedia("(prefers-reduced-motion: reduce)").matches);
  await page.emulateMedia({ reducedMotion: "reduce" });
  let result;
  try {
    await page.evaluate(() => Promise.all(document.getAnimations().map((a) => a.finished.catch(() => {}))));
    await page.addScriptTag({ path: AXE });
    result = await page.evaluate(() => window.axe.run(document, { resultTypes: ["violations"] }));
  } finally {
    await page.emulateMedia({ reducedMotion: reduced ? "reduce" : "no-preference" });
  }
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(", ")})`);
}

/** Plays the seat's moves until `done()` holds. */
async function playUntil(page, done, tries = 3000) {
  for (let i = 0; i < tries && !(await done()); i++) {
    if (!(await move(page))) await page.waitForTimeout(40);
  }
}

async function screenshot(page, name) {
  mkdirSync(OUT, { recursive: true });
  await page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });
}

describe("web client in Chromium", { skip: missing.length > 0 && `missing ${missing.join(", ")}` }, () => {
  let browser;
  let server;
  let store;
  let port;

  before(async () => {
    store = mkdtempSync(join(tmpdir(), "unoflip-web-"));
    port = await freePort();
    server = await serve(port, join(store, "games.sqlite3"));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  });

  after(async () => {
    await browser?.close();
    if (server) await stop(server);
    if (store) rmSync(store, { recursive: true, force: true });
  });

  test("the server serves the page on its gRPC port", async () => {
    const page = await fetch(server.url);
    assert.equal(page.headers.get("content-type"), "text/html; charset=utf-8");
    assert.match(await page.text(), /<script type="module" src="app.js">/);
    const app = await fetch(new URL("app.js", server.url));
    assert.equal(app.status, 200);
    assert.match(app.headers.get("content-type"), /javascript/);
  });

  test("the page plays over https when the server has a certificate (--tls-cert)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "unoflip-tls-"));
    const openssl = (...args) => execFileSync("openssl", args, { cwd: dir, stdio: "ignore" });
    const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
    openssl("req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=test-ca");
    openssl("req", ...ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost");
    execFileSync("sh", ["-c", "echo subjectAltName=DNS:localhost,IP:127.0.0.1 > ext"], { cwd: dir });
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
      "-out", "server.pem", "-days", "2", "-extfile", "ext");
    const tlsPort = await freePort();
    const child = spawn(BIN, ["serve", "--listen", `127.0.0.1:${tlsPort}`, "--store", "memory", "--bot-delay-ms", "60",
      "--tls-cert", join(dir, "server.pem"), "--tls-key", join(dir, "server.key")], { stdio: ["ignore", "ignore", "pipe"] });
    let log = "";
    child.stderr.on("data", (d) => (log += d));
    try {
      for (let i = 0; i < 300 && !log.includes("unoflip serving"); i++) await new Promise((r) => setTimeout(r, 50));
      assert.match(log, /unoflip serving.*tls=true/);
      // The test CA is not the browser's: the context trusts it by ignoring certificate errors.
      const context = await browser.newContext({ ignoreHTTPSErrors: true });
      const page = await context.newPage();
      const errors = [];
      page.on("pageerror", (e) => errors.push(String(e)));
      const url = `https://localhost:${tlsPort}/`;
      const game = await createGame(page, url, { seats: 2, bots: 1 });
      assert.match(game, /^games\//);
      assert.equal(new URL(page.url()).protocol, "https:");
      await page.click("#start");
      await page.waitForSelector("#table:not([hidden])");
      // The deal arrives on the seat's stream (over TLS too) a moment after the table shows.
      await page.waitForFunction(() => document.querySelectorAll("#hand .card").length >= 7, null, {
        timeout: 20000,
      });
      assert.deepEqual(errors, []);
      await context.close();
    } finally {
      child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a person creates a game with three bots and plays until the round ends", async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 1000 } });
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    const game = await createGame(page, server.url, { seats: 4, bots: 3, level: "expert" });
    assert.match(game, /^games\//);
    assert.match(await page.locator("#waiting-info").textContent(), /expert bots/, "the bot level chosen");
    await page.click("#start");
    await page.waitForSelector("#table:not([hidden])");
    // The table, checked on the person's turn (the game waits for them): both faces of every own
    // card, every opponent's count and visible faces, the piles, color, side, direction, turn.
    await page.waitForSelector("#turn.mine", { timeout: 20000 });
    const held = await page.locator("#hand .card").count();
    assert.ok(held >= 7, `dealt seven, holds ${held}`);
    assert.equal(Number(await page.locator('#players .player[data-seat="0"] .count').textContent()), held);
    assert.equal(await page.locator("#hand .card .other").count(), held, "UNO Flip cards show both faces");
    assert.equal(await page.locator("#players .player").count(), 4);
    for (const seat of [1, 2, 3]) {
      const row = page.locator(`#players .player[data-seat="${seat}"]`);
      const count = Number(await row.locator(".count").textContent());
      assert.ok(count >= 1);
      assert.equal(await row.locator(".backs .face").count(), count, "an opponent's visible faces");
    }
    assert.match(await page.locator("#draw-count").textContent(), /^\d+$/);
    assert.equal(await page.locator("#discard .card").count(), 1);
    assert.match(await page.locator("#side").textContent(), /light side|dark side/);
    assert.match(await page.locator("#direction").textContent(), /clockwise/);
    assert.match(await page.locator("#color").textContent(), /color: /);
    assert.match(await page.locator("#turn").textContent(), /Turn: /);
    await page.waitForSelector("#log li", { timeout: 5000 });
    assert.match(await page.locator("#log").textContent(), /Round 1 is dealt/, "the log tells what happened");
    await screenshot(page, "table-start");

    let moves = 0;
    for (let i = 0; i < 3000 && !(await page.locator("#round-result").isVisible()); i++) {
      if (await move(page)) moves++;
      else await page.waitForTimeout(40);
      if (moves === 3) await screenshot(page, "table-mid-game");
    }
    assert.ok(moves > 0, "the person played");
    await page.waitForSelector("#round-result:not([hidden])");
    assert.equal(await page.locator("#scores tr[data-seat]").count(), 4);
    const totals = await page.$$eval("#scores .total", (cells) => cells.map((c) => Number(c.textContent)));
    assert.ok(totals.some((t) => t > 0) || totals.every((t) => t === 0));
    assert.match(await page.locator("#round-result h2").textContent(), /Match over/);
    assert.match(await page.locator("#turn").textContent(), /match is over/);
    await screenshot(page, "round-over");
    // A rematch: a new game with the same options and bots, this person in the same seat.
    await page.click("#rematch");
    await page.waitForFunction((g) => decodeURIComponent(location.hash.slice(1)) !== g, game);
    await page.waitForSelector("#waiting:not([hidden])");
    assert.match(await page.locator("#waiting-info").textContent(), /expert bots\), you are seat 0\. 4 of 4 seats taken/);
    assert.equal(await page.locator("#start").isEnabled(), true);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a round's result closes, and stays closed while the next round is played", async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 1000 } });
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await createGame(page, server.url, { seats: 2, bots: 1, singleRound: false });
    await page.click("#start");
    await page.waitForSelector("#table:not([hidden])");
    for (let i = 0; i < 3000 && !(await page.locator("#round-result").isVisible()); i++) {
      if (!(await move(page))) await page.waitForTimeout(40);
    }
    await page.waitForSelector("#round-result:not([hidden])");
    const heading = await page.locator("#round-result h2").textContent();
    if (/Match over/.test(heading)) {
      // One round reached 500 points: nothing to close (rare with two seats).
      assert.equal(await page.locator("#round-result button.close").count(), 0);
    } else {
      assert.match(heading, /^Round 1: /);
      await page.click("#round-result button.close");
      assert.equal(await page.locator("#round-result").isVisible(), false);
      // Round 2 goes on; the closed result does not come back.
      await page.waitForFunction(() => /Round 2/.test(document.querySelector("#round")?.textContent ?? ""), null, { timeout: 20000 });
      for (let i = 0; i < 5; i++) {
        if (!(await move(page))) await page.waitForTimeout(100);
        assert.equal(await page.locator("#round-result").isVisible(), false, "the closed result came back");
      }
    }
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("a second seat sees only what the rules let it see, and a reload keeps the seat", async () => {
    const a = await (await browser.newContext()).newPage();
    const game = await createGame(a, server.url, { seats: 4, bots: 2, timer: 300 });
    // A second person, in another browser context, joins the open game from the lobby.
    const b = await (await browser.newContext()).newPage();
    await joinFromLobby(b, server.url, game);
    assert.match(await b.locator("#waiting-info").textContent(), /you are seat 1/);
    await a.click("#start");
    await a.waitForSelector("#table:not([hidden]) #hand .card");
    await b.waitForSelector("#table:not([hidden]) #hand .card", { timeout: 10000 });

    // Compare the two pages at the same version of the game.
    let checked = false;
    for (let i = 0; i < 100 && !checked; i++) {
      const [va, vb] = [await version(a), await version(b)];
      const [ha, hb] = [await handIds(a), await handIds(b)];
      const bothFacesOfA = await a.$$eval("#hand .card .other", (o) => o.map((e) => e.textContent).sort());
      const seenByB = await b.$$eval('#players .player[data-seat="0"] .backs .face', (f) => f.map((e) => e.textContent).sort());
      const countSeenByB = Number(await b.locator('#players .player[data-seat="0"] .count').textContent());
      if (va !== vb || va !== (await version(a)) || vb !== (await version(b))) {
        await a.waitForTimeout(50);
        continue;
      }
      // [V-1]: B holds only its own ids; none of A's cards is named on B's page.
      const idsOnB = await b.$$eval("[data-card-id]", (cards) => cards.map((c) => c.getAttribute("data-card-id")));
      assert.deepEqual(idsOnB.sort(), hb);
      assert.equal(ha.filter((id) => hb.includes(id)).length, 0);
      // [V-2]: B sees A's card count and the faces A's cards show to the table, no more.
      assert.equal(countSeenByB, ha.length);
      assert.deepEqual(seenByB, bothFacesOfA);
      checked = true;
    }
    assert.ok(checked, "the two pages reached the same version");
    // The turn timer runs: both pages count down the seconds left for the seat to move.
    for (const page of [a, b]) {
      await page.waitForFunction(() => /^\d+s left for /.test(document.querySelector("#countdown")?.textContent ?? ""));
      const left = Number((await page.locator("#countdown").textContent()).split("s")[0]);
      assert.ok(left > 0 && left <= 300, `${left}s left`);
    }
    await screenshot(b, "second-seat");

    // A reload in the middle of the game keeps the seat and the state. B plays its turns
    // meanwhile, until it is A's turn.
    for (let i = 0; i < 400 && !(await a.locator("#turn.mine").count()); i++) {
      if (!(await move(b))) await a.waitForTimeout(50);
    }
    await a.waitForSelector("#turn.mine", { timeout: 20000 });
    const [before, handBefore] = [await version(a), await handIds(a)];
    await a.reload();
    await a.waitForSelector("#table:not([hidden]) #hand .card");
    await a.waitForFunction((v) => document.body.dataset.version === v, before, { timeout: 5000 });
    assert.match(await a.locator("#game-name").textContent(), /you are seat 0/);
    assert.deepEqual(await handIds(a), handBefore);
    assert.equal(await a.locator("#turn.mine").count(), 1);
    await screenshot(a, "after-reload");
  });

  test("the page resumes its stream when the server comes back", async () => {
    const page = await (await browser.newContext()).newPage();
    await createGame(page, server.url, { seats: 2, bots: 1, singleRound: false });
    await page.click("#start");
    await page.waitForSelector("#turn.mine", { timeout: 20000 });
    const before = await version(page);
    const hand = await handIds(page);
    await stop(server);
    await page.waitForFunction(() => document.querySelector("#connection")?.textContent !== "", null, {
      timeout: 10000,
    });
    server = await serve(port, join(store, "games.sqlite3"));
    await page.waitForFunction(() => document.querySelector("#connection")?.textContent === "", null, {
      timeout: 15000,
    });
    const story = await page.locator("#log").textContent();
    assert.equal(await version(page), before, story);
    assert.deepEqual(await handIds(page), hand);
    // Play goes on over the resumed stream: the move's events arrive and the view moves on.
    const logBefore = await page.locator("#log li").count();
    assert.ok(await move(page));
    await page.waitForFunction((v) => document.body.dataset.version !== v, before, { timeout: 5000 });
    await page.waitForFunction((n) => document.querySelectorAll("#log li").length > n, logBefore, {
      timeout: 5000,
    });
  });

  test("the waiting room follows the game's stream, and a running game can be watched", async () => {
    const a = await (await browser.newContext()).newPage();
    const getGames = [];
    a.on("request", (r) => {
      if (r.url().endsWith("/GetGame")) getGames.push(r.url());
    });
    const game = await createGame(a, server.url, { seats: 3, bots: 1, singleRound: false });
    assert.match(await a.locator("#waiting-hint").textContent(), /Waiting for 1 more player/);
    assert.equal(await a.locator("#start").isEnabled(), false, "no start before every seat is taken");
    const before = getGames.length;
    // Another person joins: A's waiting room shows it without asking again.
    const b = await (await browser.newContext()).newPage();
    await joinFromLobby(b, server.url, game);
    await a.waitForFunction(() => document.querySelectorAll("#waiting-seats li.taken").length === 3, null, { timeout: 5000 });
    assert.equal(await a.locator("#start").isEnabled(), true);
    await a.waitForTimeout(1500);
    assert.equal(getGames.length, before, "the waiting room does not poll GetGame");
    // B starts; A's table opens from the stream.
    await b.click("#start");
    await a.waitForSelector("#table:not([hidden]) #hand .card", { timeout: 10000 });
    await b.waitForSelector("#table:not([hidden]) #hand .card", { timeout: 10000 });

    // A third person watches it from the lobby: the table, live, without any hand.
    const c = await (await browser.newContext()).newPage();
    await c.goto(server.url);
    await c.waitForSelector("#lobby:not([hidden])");
    await c.click("#refresh");
    assert.equal(await c.locator(`button.join[data-game="${game}"]`).count(), 0);
    await c.click(`button.watch[data-game="${game}"]`);
    await c.waitForSelector("#table:not([hidden]) #players .player");
    assert.match(await c.locator("#game-name").textContent(), /you are watching/);
    assert.equal(await c.locator("#hand-area").isVisible(), false);
    assert.equal(await c.locator("[data-card-id]").count(), 0, "a spectator is shown no card of any hand");
    assert.equal(await c.locator("#players .player").count(), 3);
    // It follows the moves of both players.
    const start = Number(await version(c));
    for (let i = 0; i < 40 && Number(await version(c)) < start + 3; i++) {
      if (!(await move(a)) && !(await move(b))) await a.waitForTimeout(50);
    }
    await c.waitForFunction((v) => Number(document.body.dataset.version) >= v, start + 3, { timeout: 10000 });
    await screenshot(c, "spectator");
    assert.deepEqual(await accessibilityProblems(c), []);
  });

  test("keyboard and screen reader: cards are named buttons, every action is reached with Tab, turns are announced", async () => {
    const page = await (await browser.newContext()).newPage();
    await page.goto(server.url);
    await page.waitForSelector("#lobby:not([hidden])");
    assert.deepEqual(await accessibilityProblems(page), [], "the lobby");
    await createGame(page, server.url, { seats: 2, bots: 1 });
    assert.deepEqual(await accessibilityProblems(page), [], "the waiting room");
    await page.click("#start");
    await page.waitForSelector("#turn.mine", { timeout: 20000 });
    assert.equal(await page.locator("#announce").getAttribute("aria-live"), "polite");
    assert.equal(await page.locator("#announce").textContent(), "Your turn.");
    const labels = await page.$$eval("#hand .card", (cards) => cards.map((c) => `${c.tagName} ${c.textContent}`));
    assert.ok(labels.length >= 7);
    for (const label of labels) assert.match(label, /^BUTTON [a-z]+( [a-z0-9]+)*, other side [a-z]+( [a-z0-9]+)*$/);
    assert.deepEqual(await accessibilityProblems(page), [], "the table");
    // The sorted hand keeps each color together.
    const colors = await page.$$eval("#hand .card", (cards) => cards.map((c) => [...c.classList].find((k) => k.startsWith("c-"))));
    const runs = colors.filter((c, i) => i === 0 || colors[i - 1] !== c);
    assert.equal(new Set(runs).size, runs.length, `colors grouped: ${colors}`);
    // With the keyboard only: Tab to the first thing the seat can do, then Enter. A wild turned
    // up as the first discard makes the first move a color (F-START-4): its buttons count.
    const before = await version(page);
    let reached = "";
    for (let i = 0; i < 80 && !reached; i++) {
      await page.keyboard.press("Tab");
      reached = await page.evaluate(() => {
        const f = document.activeElement;
        if (!f) return "";
        if (f.matches("#hand .card.playable")) return "card";
        if (f.matches("#actions button")) return "action";
        if (f.matches("#colors button")) return "color";
        return "";
      });
    }
    assert.ok(reached, "Tab reaches a playable card, an action or a color");
    await page.keyboard.press("Enter");
    // A wild asks for its color: its buttons are reached with Tab too.
    if (reached === "card" && (await page.locator("#colors button").count())) {
      await page.keyboard.press("Tab");
      for (let i = 0; i < 30 && !(await page.evaluate(() => document.activeElement?.matches("#colors button"))); i++) {
        await page.keyboard.press("Tab");
      }
      await page.keyboard.press("Enter");
    }
    await page.waitForFunction((v) => document.body.dataset.version !== v, before, { timeout: 5000 });
    // The whole match (one round) with the keyboard only.
    let keyMoves = 1;
    for (let i = 0; i < 3000 && !(await page.locator("#round-result").isVisible()); i++) {
      if (await keyMove(page)) keyMoves++;
      else await page.waitForTimeout(40);
    }
    await page.waitForSelector("#round-result:not([hidden])");
    assert.match(await page.locator("#round-result h2").textContent(), /Match over/);
    assert.ok(keyMoves >= 2, `${keyMoves} moves made with the keyboard`);
    assert.equal(await page.locator("#announce").textContent(), "The match is over.");
  });

  test("on a 390x844 phone the table and the whole hand fit the screen on the player's turn", async () => {
    // Measured without animations, which move and turn cards for a moment.
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, reducedMotion: "reduce" });
    const page = await context.newPage();
    await createGame(page, server.url, { seats: 4, bots: 3, singleRound: false });
    await page.click("#start");
    for (let checks = 0; checks < 6; checks++) {
      await page.waitForSelector("#turn.mine", { timeout: 20000 });
      const boxes = await page.$$eval("#hand .card, #actions button, #colors button, #discard .card", (nodes) =>
        nodes.map((n) => {
          const r = n.getBoundingClientRect();
          return { what: n.textContent, right: r.right, bottom: r.bottom + window.scrollY, width: r.width, height: r.height };
        }),
      );
      for (const b of boxes) {
        assert.ok(b.right <= 390 && b.bottom <= 844, `${b.what} at ${b.right}x${b.bottom} is off the 390x844 screen`);
        assert.ok(b.width >= 44 && b.height >= 44, `${b.what} is ${b.width}x${b.height}, under 44 px`);
      }
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), "no sideways scrolling");
      if (checks === 0) await screenshot(page, "phone");
      await move(page);
      await page.waitForTimeout(100);
    }
  });

  test("a finished game replays event by event, every hand shown, from a shareable URL", async () => {
    const page = await (await browser.newContext()).newPage();
    const game = await createGame(page, server.url, { seats: 2, bots: 1 });
    await page.click("#start");
    await page.waitForSelector("#table:not([hidden])");
    // Play, noting the hand this seat held at some versions (the page's own record of them).
    const held = new Map();
    for (let i = 0; i < 3000 && !(await page.locator("#round-result").isVisible()); i++) {
      const [v, hand] = [await version(page), await handIds(page)];
      if (v === (await version(page)) && hand.length) held.set(Number(v), hand);
      if (!(await move(page))) await page.waitForTimeout(40);
    }
    await page.waitForSelector("#round-result:not([hidden])");
    const last = Number(await version(page));
    await page.click("#replay-link");
    await page.waitForSelector("#replay:not([hidden])");
    await page.waitForFunction(() => /^Event 1 of \d+$/.test(document.querySelector("#replay-position")?.textContent ?? ""));
    assert.equal(await page.locator("#replay-position").textContent(), `Event 1 of ${last}`);
    assert.equal(await page.locator("#replay-back").isDisabled(), true);
    // Forward with the button, then with the arrow key: the URL follows.
    await page.click("#replay-forward");
    await page.waitForFunction(() => document.querySelector("#replay-position")?.textContent?.startsWith("Event 2 "));
    await page.keyboard.press("ArrowRight");
    await page.waitForFunction(() => document.querySelector("#replay-position")?.textContent?.startsWith("Event 3 "));
    assert.equal(decodeURIComponent(new URL(page.url()).hash), `#replay/${game}/3`);
    // After the deal every seat's hand is shown, as many cards as the table counts for it.
    const hands = page.locator("#replay-hands li");
    assert.equal(await hands.count(), 2);
    for (let i = 0; i < 2; i++) {
      const count = Number((await hands.nth(i).locator("h3").textContent()).match(/: (\d+) cards/)[1]);
      assert.equal(await hands.nth(i).locator("[data-card-id]").count(), count);
      assert.ok(count >= 7);
    }
    const shown = await page.$$eval("#replay-hands [data-card-id]", (c) => c.map((e) => e.getAttribute("data-card-id")).sort());
    assert.equal(new Set(shown).size, shown.length, "no card in two hands");
    // At moments the player saw, the replay shows the very hand the page showed then.
    const moments = [...held.keys()].filter((v) => v > 3);
    assert.ok(moments.length > 0);
    for (const v of moments.slice(0, 3)) {
      await page.goto(`${server.url}#replay/${game}/${v}`);
      await page.waitForFunction((n) => document.querySelector("#replay-position")?.textContent?.startsWith(`Event ${n} `), v);
      const seat0 = await page.$$eval('#replay-hands li[data-seat="0"] [data-card-id]', (c) => c.map((e) => e.getAttribute("data-card-id")).sort());
      assert.deepEqual(seat0, held.get(v), `seat 0's hand after event ${v}`);
    }
    await screenshot(page, "replay");
    // The same URL opened elsewhere shows the same moment.
    const other = await (await browser.newContext()).newPage();
    await other.goto(`${server.url}#replay/${game}/3`);
    await other.waitForFunction(() => document.querySelector("#replay-position")?.textContent?.startsWith("Event 3 "));
    assert.deepEqual(
      await other.$$eval("#replay-hands [data-card-id]", (c) => c.map((e) => e.getAttribute("data-card-id")).sort()),
      shown,
    );
    // Back one, and to the end.
    await other.click("#replay-back");
    await other.waitForFunction(() => document.querySelector("#replay-position")?.textContent?.startsWith("Event 2 "));
    await other.click("#replay-last");
    await other.waitForFunction((n) => document.querySelector("#replay-position")?.textContent === `Event ${n} of ${n}`, last);
    assert.match(await other.locator("#replay-status").textContent(), /The match is over/);
    assert.equal(await other.locator("#replay-forward").isDisabled(), true);
    assert.deepEqual(await accessibilityProblems(other), []);
    // The lobby offers the finished game's replay.
    await other.click("#replay-lobby");
    await other.waitForSelector("#lobby:not([hidden])");
    await other.waitForSelector(`a.replay[data-game="${game}"]`);
  });

  test("play, draw and flip animate only for those who have not asked for reduced motion", async () => {
    for (const [reducedMotion, expected] of [
      ["no-preference", ["arrive", "arrive-hand", "flip"]],
      ["reduce", ["none", "none", "none"]],
    ]) {
      const page = await (await browser.newContext({ reducedMotion })).newPage();
      await page.goto(server.url);
      await page.waitForSelector("#lobby:not([hidden])");
      const names = await page.evaluate(() =>
        [
          ["div", "card arrive"],
          ["div", "card arrive-hand"],
          ["div", "flipping"],
        ].map(([tag, cls]) => {
          const node = document.createElement(tag);
          node.className = cls;
          if (cls === "flipping") node.id = "piles";
          document.body.append(node);
          const name = getComputedStyle(node).animationName;
          node.remove();
          return name;
        }),
      );
      assert.deepEqual(names, expected, reducedMotion);
    }
  });

  test("a waiting room whose lobby expires goes back to the lobby and says why", async () => {
    const short = await serve(await freePort(), join(store, "short.sqlite3"), ["--lobby-ttl", "2s"]);
    try {
      const page = await (await browser.newContext()).newPage();
      const game = await createGame(page, short.url, { seats: 3, bots: 1 });
      await page.waitForSelector("#lobby:not([hidden])", { timeout: 15000 });
      assert.equal(await page.locator("#error").isVisible(), true);
      assert.equal(await page.locator("#error").textContent(), `${game} expired before anyone started it.`);
    } finally {
      await stop(short);
    }
  });

  test("quick play with bot fill seats the person with bots; a rated round puts them on the leaderboard", async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 1000 } });
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(server.url);
    await page.waitForSelector("#lobby:not([hidden])");
    assert.deepEqual(await accessibilityProblems(page), [], "the lobby with quick play and the leaderboard");
    await page.fill("#player-name", "Quinn");
    await page.fill("#quick-seats", "3");
    await page.fill("#quick-wait", "1");
    await page.check("#quick-single");
    assert.equal(await page.locator("#quick-rated").isChecked(), true, "rated by default");
    await page.click("#quick-play");
    await page.waitForSelector("#quick-cancel:not([hidden])");
    await page.waitForSelector("#table:not([hidden])", { timeout: 20000 });
    const game = decodeURIComponent(new URL(page.url()).hash.slice(1));
    assert.match(game, /^games\//);
    assert.equal(await page.locator("#players .player").count(), 3);
    await playUntil(page, () => page.locator("#round-result").isVisible());
    assert.equal(await page.locator("#round-result").isVisible(), true, "the rated round was played to its end");
    // The lobby's leaderboard lists Quinn, rated after one game.
    let row;
    for (let i = 0; i < 40 && !row; i++) {
      await page.goto(server.url);
      await page.waitForSelector("#lobby:not([hidden])");
      await page.waitForTimeout(250);
      const rows = await page.$$eval("#leaderboard tbody tr", (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
      row = rows.find((cells) => cells[1] === "Quinn");
    }
    assert.ok(row, "Quinn is on the leaderboard");
    assert.match(row[2], /^\d+\.\d ± \d+\.\d$/);
    assert.equal(row[3], "1", "one rated game");
    // Bots: the built-in heuristic level played the other seats.
    await page.check("#board-bots");
    await page.waitForFunction(() => [...document.querySelectorAll("#leaderboard tbody tr td:nth-child(2)")].some((td) => td.textContent === "Built-in heuristic"));
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("the lobby lists the player's games, the ones where it must act first, and opens its seat", async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 1000 } });
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(server.url);
    await page.waitForSelector("#lobby:not([hidden])");
    assert.equal(await page.locator("#mine").isHidden(), true, "no player yet, no list");
    await page.fill("#player-name", "Mina");
    await page.fill("#quick-seats", "2");
    await page.fill("#quick-wait", "0");
    await page.uncheck("#quick-rated");
    await page.click("#quick-play");
    await page.waitForSelector("#table:not([hidden])", { timeout: 20000 });
    const game = decodeURIComponent(new URL(page.url()).hash.slice(1));
    // Back in the lobby while the bot waits for Mina: the game is listed as her turn.
    let item;
    for (let i = 0; i < 40 && !item; i++) {
      await page.goto(server.url);
      await page.waitForSelector("#lobby:not([hidden])");
      await page.waitForTimeout(250);
      item = await page.$(`#my-games li.your-turn[data-game="${game}"]`);
    }
    assert.ok(item, "the game is listed as Mina's turn");
    assert.match(await item.textContent(), /your turn/);
    assert.equal(await page.locator("#my-games li").first().getAttribute("data-game"), game, "listed first");
    assert.deepEqual(await accessibilityProblems(page), [], "the lobby with the player's games");
    // Its button opens Mina's seat, where she may act.
    await page.click(`#my-games li[data-game="${game}"] button`);
    await page.waitForSelector("#table:not([hidden])");
    await page.waitForSelector("#hand button:not([disabled]), #actions button:not([disabled])", { timeout: 20000 });
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("an invite link brings a second person into the waiting room", async () => {
    const host = await (await browser.newContext()).newPage();
    const game = await createGame(host, server.url, { seats: 2, bots: 0 });
    await host.waitForSelector("#invite:not([hidden])");
    const link = await host.locator("#invite-link").getAttribute("href");
    assert.match(link, /#join\/[A-HJKMNP-Z2-9]{6}$/);
    assert.equal(await host.locator("#invite-code").textContent(), link.slice(-6));
    assert.deepEqual(await accessibilityProblems(host), [], "the waiting room with its invite");
    const guest = await (await browser.newContext()).newPage();
    await guest.goto(link);
    await guest.waitForSelector("#waiting:not([hidden])");
    assert.equal(decodeURIComponent(new URL(guest.url()).hash.slice(1)), game);
    assert.match(await guest.locator("#waiting-info").textContent(), /you are seat 1/);
    // The host's waiting room sees the seat taken; a full table needs no invite any more.
    await host.waitForSelector('#waiting-seats li.taken[data-seat="1"]');
    await host.waitForSelector("#invite", { state: "hidden" });
    assert.equal(await host.locator("#start").isDisabled(), false);
  });
});
