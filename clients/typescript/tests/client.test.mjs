// The TypeScript package against the built `unoflip serve`, with Node's test runner, over the
// official Connect-ES transports: Connect in JSON and in binary, and gRPC-web, from
// connect-node and from connect-web (fetch only, as in browsers and React Native). Every RPC is
// called (the three streams included), refusals carry their reason, and a seat's stream comes
// back by itself across a server restart with no event missed or repeated.
//
// Needs the server binary (UNOFLIP_BIN, default ../../target/debug/unoflip: `cargo build`);
// without it the tests say so loudly and skip, except under CI.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Code, ConnectError } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import {
  createConnectTransport as createFetchConnectTransport,
  createGrpcWebTransport as createFetchGrpcWebTransport,
} from "@connectrpc/connect-web";
import { Ruleset, Unoflip, UnoflipError, reasonOf } from "@unoflip/client";

const here = dirname(fileURLToPath(import.meta.url));
const BIN = process.env.UNOFLIP_BIN ?? resolve(here, "../../../target/debug/unoflip");
const ADMIN = "test-admin-token";
const missing = !existsSync(BIN);
if (missing) {
  if (process.env.CI) throw new Error(`the TypeScript client's tests need the server binary ${BIN}`);
  console.error(`\n!!! SKIPPING the TypeScript client's tests: no server binary at ${BIN} (cargo build, or set UNOFLIP_BIN) !!!\n`);
}

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

/** `unoflip serve` on `port`, ready. */
async function serve(port, store) {
  const child = spawn(
    BIN,
    ["serve", "--listen", `127.0.0.1:${port}`, "--store", store, "--bot-delay-ms", "0", "--admin-token", ADMIN],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let log = "";
  child.stderr.on("data", (d) => (log += d));
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return { child, log: () => log };
    } catch {}
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill("SIGKILL");
  throw new Error(`the server did not start:\n${log}`);
}

async function stop(server) {
  const exited = new Promise((r) => server.child.once("exit", r));
  server.child.kill("SIGTERM");
  await exited;
}

const TRANSPORTS = {
  "Connect JSON over HTTP/1.1": (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "1.1" }),
  "Connect binary over HTTP/2": (baseUrl) =>
    createConnectTransport({ baseUrl, httpVersion: "2", useBinaryFormat: true }),
  "Connect JSON with GET for reads": (baseUrl) =>
    createConnectTransport({ baseUrl, httpVersion: "1.1", useHttpGet: true }),
  "gRPC-web over HTTP/1.1": (baseUrl) => createGrpcWebTransport({ baseUrl, httpVersion: "1.1" }),
  // The transports of browsers and React Native: fetch and its streams, nothing of Node's.
  "Connect over fetch (connect-web)": (baseUrl) => createFetchConnectTransport({ baseUrl }),
  "gRPC-web over fetch (connect-web)": (baseUrl) => createFetchGrpcWebTransport({ baseUrl }),
};

/** A move that keeps the game going: a card when one can be played, never catching a seat. */
function pick(legalActions) {
  return legalActions.find((a) => a.kind.case === "playCard") ?? legalActions.find((a) => a.kind.case !== "catchUno");
}

/** Answers a prompt with a move that keeps the game going, if there is one. A prompt may be
 * overtaken (one to catch a seat without UNO, while the others play on): then the move is
 * refused with VERSION_MISMATCH and the next prompt comes. */
async function answer(seat, prompt) {
  const action = pick(prompt.legalActions);
  if (!action) return;
  try {
    await seat.act(action, { expectedVersion: prompt.version });
  } catch (e) {
    if (!(e instanceof UnoflipError && e.reason === "VERSION_MISMATCH")) throw e;
  }
}

/** Plays `seat` from its stream until the match ends; the event versions it saw. */
async function playOut(seat) {
  const versions = [];
  for await (const message of seat.events()) {
    if (message.kind.case === "prompt") {
      await answer(seat, message.kind.value);
    } else if (message.kind.case === "event") {
      versions.push(message.kind.value.version);
      if (message.kind.value.kind.case === "matchEnded") return versions;
    }
  }
  throw new Error("the stream ended before the match");
}

describe("the TypeScript client", { skip: missing }, () => {
  let server;
  let baseUrl;
  before(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    server = await serve(port, "memory");
  });
  after(async () => {
    if (server) await stop(server);
  });

  for (const [name, make] of Object.entries(TRANSPORTS)) {
    test(`calls every RPC over ${name}`, async () => {
      const unoflip = new Unoflip(make(baseUrl));
      const rpc = unoflip.rpc;

      const decks = await rpc.getDecks({});
      assert.equal(decks.flip.length, 112);
      assert.equal(decks.classic.length, 108);

      const me = await unoflip.registerPlayer("ts-client");
      assert.match(me.name, /^players\//);
      const profile = await rpc.getPlayer({ name: me.name });
      assert.equal(profile.player?.displayName, "ts-client");

      // The firehose, from the start: it sees the game about to be played.
      const firehose = new AbortController();
      const fireSeen = (async () => {
        const games = new Set();
        for await (const m of rpc.subscribeAll({ afterPosition: 0n }, { signal: firehose.signal })) {
          if (m.kind.case === "event") games.add(m.kind.value.game);
          if (games.has(played)) return true;
        }
        return false;
      })().catch((e) => (firehose.signal.aborted ? false : Promise.reject(e)));

      const created = await unoflip.createGame({ ruleset: Ruleset.FLIP, seats: 2, botSeats: [1], singleRound: true });
      var played = created.name;
      assert.equal((await unoflip.getGame(played)).name, played);
      const open = await rpc.listGames({ openOnly: true });
      assert.ok(open.games.some((g) => g.name === played));
      const seat = await unoflip.join(played, { name: "ts", player: me });
      assert.equal(seat.number, 0);
      const mine = await rpc.listMyGames({ player: me.name }, { headers: { authorization: `Bearer ${me.token}` } });
      assert.ok(mine.games.some((g) => g.game?.name === played));
      await seat.start();
      const view = await seat.view();
      assert.equal(view.hand.length >= 7, true);

      const versions = await playOut(seat);
      // Gapless and in order.
      for (let i = 1; i < versions.length; i++) assert.equal(versions[i], versions[i - 1] + 1n);
      assert.equal(await fireSeen, true);
      firehose.abort();

      const exported = await rpc.exportGame({ game: played });
      assert.equal(BigInt(exported.events.length), versions.at(-1));
      const replay = await rpc.getReplay({ game: played, version: 2n });
      assert.equal(replay.version, 2n);
      assert.equal(replay.seats.length, 2);
      const rematch = await seat.rematch();
      assert.notEqual(rematch.name, played);
      const board = await rpc.getLeaderboard({ ruleset: Ruleset.FLIP, bots: false, pageSize: 10 });
      assert.ok(Array.isArray(board.entries));

      // Leaving a game in play: the server plays the seat from then on.
      const other = await unoflip.createGame({ seats: 2, botSeats: [1] });
      const leaving = await unoflip.join(other.name);
      await leaving.start();
      const left = await leaving.leave();
      assert.equal(left.seats[0].playedByServer, true);

      // Quick play, with a bot taking the other seat at once.
      const matched = await unoflip.findMatch(me, { seats: 2 }, { botFill: true, botFillAfterSeconds: 0 });
      assert.match(matched.game, /^games\//);
      assert.ok((await matched.view()).hand.length > 0);

      // A refusal carries its reason, both as an UnoflipError and in the raw ConnectError.
      await assert.rejects(unoflip.getGame("games/none"), (e) => {
        assert.ok(e instanceof UnoflipError);
        assert.equal(e.code, Code.NotFound);
        assert.equal(e.reason, "GAME_NOT_FOUND");
        assert.equal(e.retryable, false);
        return true;
      });
      await assert.rejects(rpc.submitAction({ game: played, action: { kind: { case: "drawCard", value: {} } } }), (e) => {
        assert.ok(e instanceof ConnectError);
        assert.equal(reasonOf(e), "SEAT_TOKEN_INVALID");
        return true;
      });
      // A refused stream ends with its reason too.
      await assert.rejects(
        (async () => {
          for await (const _ of seat.client.seat({ game: "games/none", seat: 0, token: "x" }).events()) {
          }
        })(),
        (e) => e instanceof UnoflipError && e.reason === "GAME_NOT_FOUND",
      );
    });
  }

  test("a seat's stream comes back by itself across a restart, missing and repeating nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "unoflip-ts-"));
    const port = await freePort();
    const store = `sqlite:${join(dir, "games.sqlite3")}`;
    let restarting = await serve(port, store);
    try {
      const unoflip = new Unoflip(createConnectTransport({ baseUrl: `http://127.0.0.1:${port}`, httpVersion: "1.1" }));
      const game = await unoflip.createGame({ seats: 2, botSeats: [1], singleRound: true });
      const seat = await unoflip.join(game.name);
      await seat.start();
      const versions = [];
      let restarted = false;
      for await (const message of seat.events({ retryDelayMs: 100 })) {
        if (message.kind.case === "prompt") {
          if (!restarted && versions.length > 10) {
            // The server goes away mid-game and comes back on the same port and store.
            restarted = true;
            await stop(restarting);
            restarting = await serve(port, store);
            continue;
          }
          await answer(seat, message.kind.value);
        } else if (message.kind.case === "event") {
          versions.push(message.kind.value.version);
          if (message.kind.value.kind.case === "matchEnded") break;
        }
      }
      assert.ok(restarted);
      for (let i = 1; i < versions.length; i++) assert.equal(versions[i], versions[i - 1] + 1n);
    } finally {
      await stop(restarting);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the example bot plays a round over Connect and over gRPC-web", async () => {
    for (const kind of ["connect", "grpc-web"]) {
      const child = spawn(process.execPath, [join(here, "../examples/bot.mjs"), baseUrl, kind], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      child.stderr.on("data", (d) => (out += d));
      const code = await new Promise((r) => child.once("exit", r));
      assert.equal(code, 0, out);
      assert.match(out, /round over after \d+ moves of mine/);
    }
  });
});
