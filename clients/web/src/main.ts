// The unoflip web client: a lobby (create, list, join or watch games), a waiting room and a
// table (the view of one seat or of a spectator, its legal actions as buttons, a log of events in
// words), all over grpc-web.
//
// The page keeps no game state of its own beyond the last View: the server's view and its
// `legal_actions` are the truth, the stream (`Subscribe`) says when they change (in the waiting
// room too: it sends the lobby on every change), and a dropped stream resumes after the last
// event it delivered. The seat's token is kept in localStorage and the game in the URL
// (`#games/<id>`), so a reload comes back to the same seat; a game opened without a seat is
// watched as a spectator.

import { ConnectError } from "@connectrpc/connect";
import { Color, Side, type Card, type Face } from "@unoflip/client";
import {
  Awaiting,
  Ruleset,
  BotLevel,
  Direction,
  GameStatus,
  type Action,
  type Event,
  type Game,
  type HouseRules,
  type View,
} from "@unoflip/client";
import { UnoflipError } from "@unoflip/client";
import { authorized, client, loadMe, loadSeat, saveMe, saveSeat, type Me } from "./api";
import { Kind } from "@unoflip/client";
import { actionWords, activeFace, colorName, eventWords, faceName, otherFace } from "./words";

const HOUSE_RULES: [keyof HouseRuleFlags, string][] = [
  ["stacking", "Stacking draw cards (H-STACK)"],
  ["jumpIn", "Jump-in (H-JUMP)"],
  ["sevenZero", "Seven-zero (H-SEVEN0)"],
  ["drawToMatch", "Draw to match (H-DRAWMATCH)"],
  ["multi", "Identical cards together (H-MULTI)"],
  ["falseUno", "False UNO costs two (H-FALSEUNO)"],
  ["strictWildDraw", "Strict wild draws (H-STRICT)"],
  ["playToLast", "Play to the last (H-LAST)"],
];

/** The house rules' switches, as the generated `HouseRules` message has them. */
type HouseRuleFlags = Omit<HouseRules, "$typeName" | "$unknown">;

const LOG_LINES = 60;

const $ = <T extends HTMLElement = HTMLElement>(selector: string): T => {
  const found = document.querySelector<T>(selector);
  if (!found) throw new Error(`missing ${selector}`);
  return found;
};

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

function showError(error: unknown): void {
  const text =
    error instanceof ConnectError || error instanceof UnoflipError ? messageOf(error) : String(error);
  const box = $("#error");
  box.textContent = text;
  box.hidden = false;
}

/** A refusal's words for a person: the server's message (the reason is for programs). */
function messageOf(error: ConnectError | UnoflipError): string {
  return error instanceof ConnectError ? error.rawMessage : error.message;
}

function clearError(): void {
  $("#error").hidden = true;
}

function screen(name: "lobby" | "waiting" | "table" | "replay"): void {
  for (const id of ["lobby", "waiting", "table", "replay"]) $(`#${id}`).hidden = id !== name;
}

// ----- the lobby -----

function buildLobby(): void {
  const rules = $("#house-rules");
  for (const [flag, label] of HOUSE_RULES) {
    rules.append(
      el("label", {}, el("input", { type: "checkbox", name: "house", value: flag }), ` ${label}`),
    );
  }
  $("#create-form").addEventListener("submit", (e) => {
    e.preventDefault();
    void createGame();
  });
  $("#refresh").addEventListener("click", () => void listGames());
  $("#quick-form").addEventListener("submit", (e) => {
    e.preventDefault();
    void quickPlay();
  });
  $("#quick-cancel").addEventListener("click", stopLooking);
  for (const id of ["#board-ruleset", "#board-bots"]) $(id).addEventListener("change", () => void showLeaderboard());
}

async function createGame(): Promise<void> {
  clearError();
  const seats = Number($<HTMLInputElement>("#seats").value);
  const bots = Number($<HTMLInputElement>("#bots").value);
  const house = Object.fromEntries(HOUSE_RULES.map(([flag]) => [flag, false])) as HouseRuleFlags;
  for (const box of document.querySelectorAll<HTMLInputElement>("input[name=house]:checked")) {
    house[box.value as keyof HouseRuleFlags] = true;
  }
  try {
    const created = await client.createGame({
      options: {
        ruleset: $<HTMLSelectElement>("#ruleset").value === "classic" ? Ruleset.CLASSIC : Ruleset.FLIP,
        seats,
        botSeats: Array.from({ length: Math.min(bots, seats - 1) }, (_, i) => seats - 1 - i),
        botLevel: BOT_LEVELS[$<HTMLSelectElement>("#bot-level").value] ?? BotLevel.HEURISTIC,
        turnTimerSeconds: Number($<HTMLInputElement>("#timer").value) || 0,
        singleRound: $<HTMLInputElement>("#single-round").checked,
        houseRules: house,
      },
    });
    if (created.game) await join(created.game.name);
  } catch (error) {
    showError(error);
  }
}

async function listGames(): Promise<void> {
  try {
    const { games } = await client.listGames({ openOnly: false, pageSize: 50 });
    const list = $("#games");
    list.replaceChildren(
      ...games
        .filter((g) => g.status !== GameStatus.UNSPECIFIED)
        .map((g) => {
          const free = g.seats.filter((s) => !s.taken).length;
          const waiting = g.status === GameStatus.WAITING;
          const button = waiting
            ? el("button", { type: "button", class: "join", "data-game": g.name, "aria-label": `Join ${g.name}` }, "Join")
            : el("button", { type: "button", class: "watch", "data-game": g.name, "aria-label": `Watch ${g.name}` }, "Watch");
          button.addEventListener("click", () => {
            if (waiting) void join(g.name);
            else location.hash = g.name;
          });
          const extra: HTMLElement[] = [];
          if (g.status === GameStatus.FINISHED) {
            const replay = el("a", { class: "replay", href: `#${replayHash(g.name, 1)}`, "data-game": g.name, "aria-label": `Replay ${g.name}` }, "Replay");
            extra.push(replay);
          }
          const state = waiting
            ? `${free} of ${g.seats.length} seats free`
            : g.status === GameStatus.PLAYING
              ? `playing, ${g.seats.length} seats`
              : "finished";
          return el("li", { "data-status": waiting ? "waiting" : g.status === GameStatus.PLAYING ? "playing" : "finished" }, `${g.name}: ${rulesetName(g)}, ${state} `, button, ...extra.flatMap((e) => [" ", e]));
        }),
    );
    if (games.length === 0) list.replaceChildren(el("li", {}, "No games yet."));
  } catch (error) {
    showError(error);
  }
}

/** The bot levels the server offers, by the value of the page's choice. */
const BOT_LEVELS: Record<string, BotLevel> = {
  random: BotLevel.RANDOM,
  heuristic: BotLevel.HEURISTIC,
  expert: BotLevel.EXPERT,
};

function botLevelName(g: Game): string {
  const level = g.options?.botLevel ?? BotLevel.HEURISTIC;
  return Object.keys(BOT_LEVELS).find((name) => BOT_LEVELS[name] === level) ?? "heuristic";
}

/** How the page names each seat: "bot 2", "Ann 1", "seat 3". */
function seatNames(g: Game): Map<number, string> {
  return new Map(g.seats.map((s) => [s.seat, s.playedByServer ? `bot ${s.seat}` : s.playerName ? `${s.playerName} ${s.seat}` : `seat ${s.seat}`]));
}

function rulesetName(g: Game): string {
  return g.options?.ruleset === Ruleset.CLASSIC ? "classic UNO" : "UNO Flip";
}

/** Joins `game`, a game's name or its invite code. */
async function join(nameOrCode: string): Promise<void> {
  clearError();
  try {
    const joined = await client.joinGame({ game: nameOrCode, playerName: playerName() });
    const game = joined.game?.name ?? nameOrCode;
    const key = { game, seat: joined.seat, token: joined.seatToken };
    saveSeat(key);
    // A new fragment enters the game through `route`; the same one (a watched lobby) here.
    if (decodeURIComponent(location.hash.slice(1)) !== game) location.hash = game;
    else await enter(key);
  } catch (error) {
    showError(error);
  }
}

// ----- waiting for the start -----

let table: Table | undefined;
// The waiting room's stream, closed when the page leaves it.
let waitingRoom: AbortController | undefined;

/** A game the page shows: with a seat, or watched (no seat, no token). */
type Place = { game: string; seat?: number; token?: string };

function leaveScreens(): void {
  table?.close();
  table = undefined;
  waitingRoom?.abort();
  waitingRoom = undefined;
}

// Counts the screens entered: an older `enter` still waiting for its answer gives way.
let entered = 0;

async function enter(key: Place): Promise<void> {
  const mine = ++entered;
  leaveScreens();
  const { game } = await client.getGame({ name: key.game });
  if (!game || mine !== entered) return;
  if (game.status === GameStatus.EXPIRED) {
    // Never started: nothing to show but the lobby, and why.
    location.hash = "";
    showError(`${game.name} expired before anyone started it.`);
    return;
  }
  if (game.status === GameStatus.WAITING) {
    wait(key, game);
    return;
  }
  screen("table");
  table = new Table(key, game);
  table.run();
}

/** The waiting room: follows the game's stream, which sends the lobby on every change and the
 * game's first events once it starts. */
function wait(key: Place, game: Game): void {
  screen("waiting");
  showLobby(key, game);
  const abort = new AbortController();
  waitingRoom = abort;
  void (async () => {
    let delay = 250;
    while (!abort.signal.aborted) {
      try {
        const stream = client.subscribe({ game: key.game, afterVersion: 0n, includeView: false }, authorized(key.token, abort.signal));
        for await (const message of stream) {
          delay = 250;
          const m = message.kind;
          if (m.case === "lobby") showLobby(key, m.value);
          else if (m.case === "view" || m.case === "event") {
            // Started (or expired): the table takes over.
            if (!abort.signal.aborted) void enter(key).catch(showError);
            return;
          }
        }
      } catch (error) {
        if (abort.signal.aborted) return;
        console.warn("waiting room stream dropped; resuming", error);
      }
      await new Promise((r) => window.setTimeout(r, delay));
      delay = Math.min(delay * 2, 4000);
    }
  })();
}

function showLobby(key: Place, game: Game): void {
  const taken = game.seats.filter((s) => s.taken).length;
  const bots = game.seats.some((s) => s.playedByServer) ? `, ${botLevelName(game)} bots` : "";
  const you = key.seat === undefined ? "you are watching" : `you are seat ${key.seat}`;
  $("#waiting-info").textContent = `${game.name} (${rulesetName(game)}${bots}), ${you}. ${taken} of ${game.seats.length} seats taken.`;
  $("#waiting-seats").replaceChildren(
    ...game.seats.map((s) =>
      el(
        "li",
        { "data-seat": String(s.seat), class: s.taken ? "taken" : "free" },
        `Seat ${s.seat}: ${s.playedByServer ? "bot" : s.taken ? s.playerName || "a player" : "free"}${s.seat === key.seat ? " (you)" : ""}`,
      ),
    ),
  );
  const start = $<HTMLButtonElement>("#start");
  const joinButton = $<HTMLButtonElement>("#waiting-join");
  start.hidden = key.token === undefined;
  joinButton.hidden = key.token !== undefined || taken === game.seats.length;
  start.disabled = taken < game.seats.length;
  $("#waiting-hint").textContent = taken < game.seats.length ? `Waiting for ${game.seats.length - taken} more player${game.seats.length - taken === 1 ? "" : "s"}.` : "Every seat is taken.";
  start.onclick = async () => {
    try {
      await client.startGame({ game: key.game }, authorized(key.token));
    } catch (error) {
      showError(error);
    }
  };
  joinButton.onclick = () => void join(key.game);
  const invite = $("#invite");
  invite.hidden = !game.inviteCode || taken === game.seats.length;
  if (game.inviteCode) {
    const link = inviteLink(game.inviteCode);
    const a = $<HTMLAnchorElement>("#invite-link");
    a.href = link;
    a.textContent = link;
    $("#invite-code").textContent = game.inviteCode;
    $("#invite-copy").onclick = () => {
      void navigator.clipboard?.writeText(link).then(
        () => announce("Invite link copied."),
        () => announce("Copy the link by hand."),
      );
    };
  }
}

/** Says `text` to screen readers. */
function announce(text: string): void {
  $("#announce").textContent = text;
}

/** The page's link that joins a game by its invite code. */
function inviteLink(code: string): string {
  return `${location.origin}${location.pathname}#join/${code}`;
}

// ----- players, quick play, leaderboard -----

/** The player this browser plays quick play as: registered under the name field's name the
 * first time (again when the name changes), its token kept in localStorage. */
async function me(): Promise<Me> {
  const name = playerName();
  const kept = loadMe();
  if (kept && kept.name === name) return kept;
  const registered = await client.registerPlayer({ displayName: name, bot: false });
  const fresh = { player: registered.player?.name ?? "", token: registered.playerToken, name };
  saveMe(fresh);
  return fresh;
}

// The quick-play stream while the page is looking for a game.
let looking: AbortController | undefined;

async function quickPlay(): Promise<void> {
  clearError();
  looking?.abort();
  const abort = new AbortController();
  looking = abort;
  const status = $("#quick-status");
  $<HTMLButtonElement>("#quick-play").disabled = true;
  $("#quick-cancel").hidden = false;
  try {
    const player = await me();
    const botFill = $<HTMLInputElement>("#quick-bots").checked;
    const stream = client.findMatch(
      {
        player: player.player,
        options: {
          ruleset: $<HTMLSelectElement>("#quick-ruleset").value === "classic" ? Ruleset.CLASSIC : Ruleset.FLIP,
          seats: Number($<HTMLInputElement>("#quick-seats").value),
          rated: $<HTMLInputElement>("#quick-rated").checked,
          singleRound: $<HTMLInputElement>("#quick-single").checked,
        },
        botFill,
        botFillAfterSeconds: botFill ? Number($<HTMLInputElement>("#quick-wait").value) || 0 : 0,
      },
      authorized(player.token, abort.signal),
    );
    status.textContent = "Looking for a game...";
    for await (const message of stream) {
      const u = message.update;
      if (u.case === "waiting") {
        const others = u.value.playersQueued - 1;
        status.textContent = `Looking for a game: ${u.value.waitedSeconds} s, ${others} other player${others === 1 ? "" : "s"} looking.`;
      } else if (u.case === "found" && u.value.game) {
        status.textContent = "Found a game.";
        const key = { game: u.value.game.name, seat: u.value.seat, token: u.value.seatToken };
        saveSeat(key);
        location.hash = key.game;
        return;
      }
    }
  } catch (error) {
    if (!abort.signal.aborted) showError(error);
    status.textContent = "";
  } finally {
    if (looking === abort) looking = undefined;
    $<HTMLButtonElement>("#quick-play").disabled = false;
    $("#quick-cancel").hidden = true;
  }
}

function stopLooking(): void {
  looking?.abort();
  looking = undefined;
  $("#quick-status").textContent = "Stopped looking.";
}

/** The games of the player this browser plays as: those where it must act first, marked. */
async function showMyGames(): Promise<void> {
  const mine = loadMe();
  if (!mine) return;
  try {
    const { games } = await client.listMyGames({ player: mine.player, pageSize: 20 }, authorized(mine.token));
    $("#mine").hidden = games.length === 0;
    $("#my-games").replaceChildren(
      ...games.map((held) => {
        const g = held.game;
        const name = g?.name ?? "";
        const state = held.yourTurn
          ? "your turn"
          : g?.status === GameStatus.WAITING
            ? "waiting for players"
            : g?.status === GameStatus.PLAYING
              ? "playing"
              : "over";
        const deadline = held.yourTurn && held.turnDeadline ? `, until ${new Date(Number(held.turnDeadline.seconds) * 1000).toLocaleString()}` : "";
        const label = held.yourTurn ? "Play" : "Open";
        const open = el("button", { type: "button", class: "open", "data-game": name, "aria-label": `${label} ${name}` }, label);
        open.addEventListener("click", () => {
          saveSeat({ game: name, seat: held.seat, token: held.seatToken });
          location.hash = name;
        });
        return el(
          "li",
          { "data-game": name, class: held.yourTurn ? "your-turn" : "" },
          `${name}: ${g ? rulesetName(g) : ""}, ${state}${deadline} `,
          open,
        );
      }),
    );
  } catch (error) {
    showError(error);
  }
}

async function showLeaderboard(): Promise<void> {
  try {
    const { entries } = await client.getLeaderboard({
      ruleset: $<HTMLSelectElement>("#board-ruleset").value === "classic" ? Ruleset.CLASSIC : Ruleset.FLIP,
      bots: $<HTMLInputElement>("#board-bots").checked,
      pageSize: 20,
    });
    const mine = loadMe()?.player;
    $("#leaderboard tbody").replaceChildren(
      ...entries.map((e) =>
        el(
          "tr",
          { "data-player": e.player?.name ?? "", class: e.player?.name === mine ? "me" : "" },
          el("td", {}, String(e.rank)),
          el("td", {}, e.player?.displayName ?? ""),
          el("td", {}, `${(e.rating?.rating ?? 0).toFixed(1)} ± ${(2 * (e.rating?.uncertainty ?? 0)).toFixed(1)}`),
          el("td", {}, String(e.rating?.games ?? 0)),
          el("td", {}, String(e.rating?.wins ?? 0)),
        ),
      ),
    );
    $("#leaderboard-empty").hidden = entries.length > 0;
  } catch (error) {
    showError(error);
  }
}

// ----- the table -----

class Table {
  private view?: View;
  private side = Side.LIGHT;
  // The side as of the last event logged (the log may be behind the view while it catches up).
  private logSide = Side.LIGHT;
  // The last event the stream delivered: 1 at first (the creation), so the log tells the whole
  // story.
  private lastVersion = 1n;
  private readonly abort = new AbortController();
  private refreshing?: Promise<void>;
  private wildCard?: number;
  private readonly names: Map<number, string>;
  private timer = 0;
  // The last round whose result the player closed: its box stays closed (until the match ends).
  private closedRound = 0;

  // What the live region last said about the turn.
  private announced = "";
  // The top discard last shown, to animate a new one; the hand and side likewise.
  private lastTop?: number;
  private lastHand?: Set<number>;
  private lastSide?: Side;

  constructor(
    private readonly key: Place,
    private readonly game: Game,
  ) {
    this.names = seatNames(game);
    $("#log").replaceChildren();
    const you = key.seat === undefined ? "you are watching" : `you are seat ${key.seat}`;
    $("#game-name").textContent = `${game.name}: ${rulesetName(game)}, ${you}`;
    $("#hand-area").hidden = key.seat === undefined;
    document.body.classList.toggle("spectating", key.seat === undefined);
    this.timer = window.setInterval(() => this.countdown(), 250);
  }

  /** Draws the last view again (after a local choice such as the UNO toggle). */
  rerender(): void {
    if (this.view) this.show(this.view);
  }

  close(): void {
    this.abort.abort();
    window.clearInterval(this.timer);
  }

  private readonly who = (seat: number): string => (seat === this.key.seat ? "you" : (this.names.get(seat) ?? `seat ${seat}`));

  /** Follows the seat's stream; resumes after the last event when the connection drops. */
  run(): void {
    void (async () => {
      let delay = 250;
      while (!this.abort.signal.aborted) {
        try {
          // The table as it is now; the stream then tells the story so far and what follows.
          this.scheduleRefresh();
          const stream = client.subscribe(
            { game: this.key.game, afterVersion: this.lastVersion, includeView: false },
            authorized(this.key.token, this.abort.signal),
          );
          this.connected(true);
          for await (const message of stream) {
            delay = 250;
            const m = message.kind;
            if (m.case === "view") {
              if (m.value.version > this.lastVersion) this.lastVersion = m.value.version;
              this.show(m.value);
            } else if (m.case === "event") {
              this.lastVersion = m.value.version;
              this.logEvent(m.value);
              this.scheduleRefresh();
            }
          }
        } catch (error) {
          if (this.abort.signal.aborted) return;
          this.connected(false);
          console.warn("stream dropped; resuming", error);
        }
        await new Promise((r) => window.setTimeout(r, delay));
        delay = Math.min(delay * 2, 4000);
      }
    })();
  }

  private connected(up: boolean): void {
    $("#connection").textContent = up ? "" : "Connection lost; reconnecting…";
  }

  private scheduleRefresh(): void {
    if (this.refreshing) return;
    this.refreshing = (async () => {
      await new Promise((r) => window.setTimeout(r, 30));
      this.refreshing = undefined;
      try {
        const { view } = await client.getView({ game: this.key.game }, authorized(this.key.token));
        if (view && (!this.view || view.version >= this.view.version)) this.show(view);
      } catch (error) {
        showError(error);
      }
    })();
  }

  private logEvent(event: Event): void {
    const k = event.kind;
    if (k.case === "roundStarted") this.logSide = Side.LIGHT;
    if (k.case === "flipped") this.logSide = this.logSide === Side.LIGHT ? Side.DARK : Side.LIGHT;
    if (k.case === "turnStarted") return;
    const words = eventWords(event, this.who, this.logSide);
    if (!words) return;
    const log = $("#log");
    log.prepend(el("li", { "data-version": String(event.version) }, words));
    while (log.children.length > LOG_LINES) log.lastElementChild?.remove();
  }

  private show(view: View): void {
    this.view = view;
    this.side = view.side;
    this.renderStatus(view);
    this.renderPlayers(view);
    this.renderPiles(view);
    this.renderHand(view);
    this.renderActions(view);
    this.renderResult(view);
    this.announce(view);
    document.body.dataset.version = String(view.version);
  }

  /** Says whose turn it is in the polite live region when the turn changes hands. */
  private announce(v: View): void {
    const text =
      v.awaiting === Awaiting.MATCH_OVER
        ? "The match is over."
        : v.turn === this.key.seat
          ? "Your turn."
          : `${this.who(v.turn)}'s turn.`;
    const key = `${v.round}/${v.turn}/${v.awaiting === Awaiting.MATCH_OVER}`;
    if (key === this.announced) return;
    const mine = v.turn === this.key.seat && v.awaiting !== Awaiting.MATCH_OVER;
    if (mine && this.announced !== "") beep();
    this.announced = key;
    $("#announce").textContent = text;
  }

  private renderStatus(v: View): void {
    const side = v.ruleset === Ruleset.CLASSIC ? "classic" : v.side === Side.DARK ? "dark side" : "light side";
    const direction = v.direction === Direction.COUNTER_CLOCKWISE ? "counter-clockwise ↺" : "clockwise ↻";
    const color = colorName(v.color) || "to be chosen";
    const waiting: Record<number, string> = {
      [Awaiting.PLAY]: "to play",
      [Awaiting.PLAY_OR_KEEP_DRAWN]: "to play or keep the drawn card",
      [Awaiting.CHOOSE_COLOR]: "to choose a color",
      [Awaiting.PENALTY]: v.pendingDraw ? `to take ${v.pendingDraw} cards or answer` : "to take the penalty or answer",
      [Awaiting.CHOOSE_SWAP]: "to choose whom to swap hands with",
    };
    const turn = v.awaiting === Awaiting.MATCH_OVER ? "The match is over." : `Turn: ${this.who(v.turn)}, ${waiting[v.awaiting] ?? ""}.`;
    $("#status").replaceChildren(
      el("span", { id: "round" }, `Round ${v.round}`),
      el("span", { id: "side" }, side),
      el("span", { id: "direction" }, direction),
      el("span", { id: "color", class: `swatch c-${colorName(v.color) || "none"}` }, `color: ${color}`),
      el("span", { id: "turn", "data-turn": String(v.turn), class: v.turn === this.key.seat ? "mine" : "" }, turn),
    );
  }

  private renderPlayers(v: View): void {
    // Around the table clockwise, starting at the seat after the viewer's, the viewer last.
    const n = v.players.length;
    const from = this.key.seat === undefined ? 0 : this.key.seat + 1;
    const around = [...v.players].sort((a, b) => ((a.seat - from + n) % n) - ((b.seat - from + n) % n));
    const rows = around.map((p) => {
      const backs = el("span", { class: "backs" }, ...p.backs.map((f) => faceChip(f)));
      const flags = [p.unoExposed ? "UNO? (catchable)" : "", p.outPlace ? `out #${p.outPlace}` : ""].filter(Boolean).join(" ");
      return el(
        "li",
        {
          class: `player${p.seat === v.turn ? " turn" : ""}${p.seat === this.key.seat ? " me" : ""}`,
          "data-seat": String(p.seat),
        },
        el("span", { class: "name" }, this.who(p.seat)),
        el("span", { class: "count", "aria-label": `${p.cardCount} cards` }, String(p.cardCount)),
        el("span", { class: "unit", "aria-hidden": "true" }, " cards "),
        p.seat === this.key.seat ? "" : backs,
        el("span", { class: "flags" }, flags),
        el("span", { class: "score" }, String(p.score)),
      );
    });
    $("#players").replaceChildren(...rows);
  }

  private renderPiles(v: View): void {
    const top = v.discard.at(-1);
    $("#draw-pile").replaceChildren(
      el("div", { class: "label" }, `Draw pile: `, el("span", { id: "draw-count" }, String(v.drawCount))),
      v.drawTop
        ? faceChip(v.drawTop, "back", `draw pile's top card shows ${faceName(v.drawTop)}`)
        : el("div", { class: "card back", role: "img", "aria-label": "draw pile" }, "UNO"),
    );
    const shown = top ? cardElement(top, v.side, { role: "img" }, "div") : el("div", { class: "card" }, "—");
    if (top && this.lastTop !== undefined && top.id !== this.lastTop) shown.classList.add("arrive");
    this.lastTop = top?.id;
    $("#discard").replaceChildren(el("div", { class: "label" }, "Discard"), shown);
    $("#table").classList.toggle("dark", v.side === Side.DARK);
    if (this.lastSide !== undefined && this.lastSide !== v.side) {
      const piles = $("#piles");
      piles.classList.remove("flipping");
      void piles.offsetWidth; // restart the animation
      piles.classList.add("flipping");
    }
    this.lastSide = v.side;
  }

  private plays(v: View): Action[] {
    return v.legalActions.filter((a) => a.kind.case === "playCard");
  }

  private renderHand(v: View): void {
    const plays = this.plays(v);
    const uno = $<HTMLInputElement>("#uno-toggle");
    $("#uno-label").hidden = !plays.some((a) => a.kind.case === "playCard" && a.kind.value.uno);
    const sorted = $<HTMLInputElement>("#sort-hand").checked;
    const hand = sorted ? [...v.hand].sort((a, b) => sortKey(a, v.side) - sortKey(b, v.side)) : v.hand;
    const cards = hand.map((card, i) => {
      const mine = plays.filter((a) => a.kind.case === "playCard" && a.kind.value.card === card.id && a.kind.value.moreCards.length === 0);
      const node = cardElement(card, v.side, {
        "data-card-id": String(card.id),
        class: mine.length ? "playable" : "",
        title: mine.length ? "Play it" : "",
        "aria-disabled": mine.length ? "false" : "true",
      });
      // Its place in the fan: turned and lowered the farther it is from the middle.
      const fan = i - (hand.length - 1) / 2;
      node.style.setProperty("--fan", fan.toFixed(1));
      node.style.setProperty("--lift", `${(fan * fan * 0.5).toFixed(1)}px`);
      if (v.drawnCard === card.id) node.classList.add("drawn");
      if (this.lastHand && !this.lastHand.has(card.id)) node.classList.add("arrive-hand");
      if (mine.length) {
        node.addEventListener("click", () => {
          const wantUno = uno.checked;
          const candidates = mine.filter((a) => a.kind.case === "playCard" && a.kind.value.uno === wantUno);
          const choice = candidates.length ? candidates : mine;
          if (choice.length === 1) {
            void this.submit(choice[0]);
          } else {
            this.wildCard = card.id;
            this.renderActions(v);
          }
        });
      }
      return node;
    });
    $("#hand").replaceChildren(...cards);
    $("#hand").classList.toggle("fan", hand.length <= 14);
    this.lastHand = new Set(v.hand.map((c) => c.id));
  }

  private cardName = (id: number): string => {
    const card = this.view?.hand.find((c) => c.id === id) ?? this.view?.discard.find((c) => c.id === id);
    return card ? faceName(activeFace(card, this.side)) : `#${id}`;
  };

  private renderActions(v: View): void {
    const bar = $("#actions");
    const colors = $("#colors");
    const buttons: HTMLElement[] = [];
    const colorButtons: HTMLElement[] = [];
    const wantUno = $<HTMLInputElement>("#uno-toggle").checked;
    for (const action of v.legalActions) {
      const k = action.kind;
      if (k.case === "playCard" && k.value.moreCards.length === 0) {
        // A wild chosen in the hand: its colors.
        if (k.value.card === this.wildCard && k.value.color !== Color.UNSPECIFIED && k.value.uno === wantUno) {
          const b = el("button", { type: "button", class: `color c-${colorName(k.value.color)}`, "data-color": colorName(k.value.color) }, colorName(k.value.color));
          b.addEventListener("click", () => void this.submit(action));
          colorButtons.push(b);
        }
        continue;
      }
      if (k.case === "chooseColor") {
        const b = el("button", { type: "button", class: `color c-${colorName(k.value.color)}`, "data-color": colorName(k.value.color) }, colorName(k.value.color));
        b.addEventListener("click", () => void this.submit(action));
        colorButtons.push(b);
        continue;
      }
      if (k.case === "playCard" && k.value.uno !== wantUno) continue;
      const b = el("button", { type: "button", "data-kind": k.case ?? "" }, actionWords(action, this.who, this.cardName));
      b.addEventListener("click", () => void this.submit(action));
      buttons.push(b);
    }
    bar.replaceChildren(...buttons);
    colors.replaceChildren(...(colorButtons.length ? [el("span", {}, "Choose a color: "), ...colorButtons] : []));
  }

  private renderResult(v: View): void {
    const box = $("#round-result");
    const r = v.lastRound;
    const over = v.awaiting === Awaiting.MATCH_OVER;
    if (!r || (!over && r.round <= this.closedRound)) {
      box.hidden = true;
      return;
    }
    box.hidden = false;
    const rows = v.players.map((p) =>
      el(
        "tr",
        { "data-seat": String(p.seat) },
        el("td", {}, this.who(p.seat)),
        el("td", {}, String(r.handPoints[p.seat] ?? 0)),
        el("td", {}, String(r.points[p.seat] ?? 0)),
        el("td", { class: "total" }, String(p.score)),
      ),
    );
    const close = el("button", { class: "close", type: "button" }, "Close");
    close.addEventListener("click", () => {
      this.closedRound = r.round;
      box.hidden = true;
    });
    box.replaceChildren(
      el("h2", {}, over ? `Match over: ${v.winners.map(this.who).join(" and ")} won` : `Round ${r.round}: ${this.who(r.winner)} went out first`),
      r.order.length > 1 ? el("p", {}, `Finishing order: ${r.order.map(this.who).join(", ")}`) : "",
      el(
        "table",
        { id: "scores" },
        el("tr", {}, el("th", {}, "Seat"), el("th", {}, "Hand"), el("th", {}, "Points"), el("th", {}, "Total")),
        ...rows,
      ),
      over ? this.endButtons() : close,
    );
  }

  /** At the match's end: a rematch (same options, same bot seats, this seat; the same new game
   * for every player who asks) and the lobby. */
  private endButtons(): HTMLElement {
    const lobby = el("button", { type: "button", id: "back-to-lobby" }, "Back to the lobby");
    lobby.addEventListener("click", () => {
      location.hash = "";
    });
    const bar = el("p", { class: "end" }, lobby, el("a", { id: "replay-link", href: `#${replayHash(this.key.game, 1)}` }, "Replay this game"));
    if (this.key.seat !== undefined && this.key.token !== undefined) {
      const rematch = el("button", { type: "button", id: "rematch" }, "Rematch");
      rematch.addEventListener("click", () => void this.rematch());
      bar.prepend(rematch, " ");
    }
    return bar;
  }

  private async rematch(): Promise<void> {
    clearError();
    try {
      const { game } = await client.rematch({ game: this.key.game }, authorized(this.key.token));
      const name = game?.name;
      if (!name) return;
      if (!loadSeat(name)) {
        // The old seat if it is free, else any.
        const joined = await client
          .joinGame({ game: name, seat: this.key.seat, playerName: playerName() })
          .catch(() => client.joinGame({ game: name, playerName: playerName() }));
        saveSeat({ game: name, seat: joined.seat, token: joined.seatToken });
      }
      location.hash = name;
    } catch (error) {
      showError(error);
    }
  }

  private countdown(): void {
    const node = $("#countdown");
    const view = this.view;
    const deadline = view?.turnDeadline;
    if (!view || !deadline || view.awaiting === Awaiting.MATCH_OVER) {
      node.textContent = "";
      return;
    }
    const at = Number(deadline.seconds) * 1000 + deadline.nanos / 1e6;
    const left = Math.max(0, Math.ceil((at - Date.now()) / 1000));
    node.textContent = `${left}s left for ${this.who(view.turn)}`;
  }

  private async submit(action: Action): Promise<void> {
    clearError();
    this.wildCard = undefined;
    const v = this.view;
    if (!v || this.key.token === undefined) return;
    try {
      const answer = await client.submitAction(
        { game: this.key.game, action, requestId: requestId(), expectedVersion: v.version },
        authorized(this.key.token),
      );
      $<HTMLInputElement>("#uno-toggle").checked = false;
      if (answer.version > v.version) this.scheduleRefresh();
    } catch (error) {
      showError(error);
      this.scheduleRefresh();
    }
  }
}

/** A fresh request id. `crypto.randomUUID` exists only in secure contexts (https, localhost);
 * `getRandomValues` also works for a page served over plain http on a LAN address. */
function requestId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function faceChip(face: Face, extra = "", label = ""): HTMLElement {
  const attrs: Record<string, string> = { class: `face c-${colorName(face.color) || "wild"} ${extra}`.trim() };
  if (label) Object.assign(attrs, { role: "img", "aria-label": label });
  return el("span", attrs, faceName(face));
}

/** A card with its active face large and its other face small (both faces of the viewer's own
 * cards): a button (in the hand) or an image (the discard), named "pink 5, other side wild". */
function cardElement(card: Card, side: Side, attrs: Record<string, string>, tag: "button" | "div" = "button"): HTMLElement {
  const active = activeFace(card, side);
  const other = otherFace(card, side);
  const node = el(
    tag,
    {
      ...(tag === "button" ? { type: "button" } : {}),
      ...attrs,
      class: `card c-${colorName(active?.color ?? Color.UNSPECIFIED) || "wild"} ${attrs.class ?? ""}`.trim(),
    },
    el("span", { class: "active" }, faceName(active)),
  );
  // The name read out is the text: "pink 5, other side wild".
  if (tag === "div") node.setAttribute("aria-label", other ? `${faceName(active)}, other side ${faceName(other)}` : faceName(active));
  if (other) {
    node.append(
      el("span", { class: "visually-hidden" }, ", other side "),
      el("span", { class: `other c-${colorName(other.color) || "wild"}` }, faceName(other)),
    );
  }
  return node;
}

/** Where a card goes in a hand sorted by color and value (wilds last) on the side up. */
function sortKey(card: Card, side: Side): number {
  const face = activeFace(card, side);
  if (!face) return 1e6;
  const color = face.color === Color.UNSPECIFIED ? 99 : face.color;
  const value = face.kind === Kind.NUMBER ? face.number : 20 + face.kind;
  return color * 1000 + value * 4 + (card.id % 4) / 8;
}

/** A short tone when the turn comes to the viewer, if the sound is on (off by default). */
function beep(): void {
  if (!$<HTMLInputElement>("#sound").checked) return;
  try {
    const audio = new AudioContext();
    const tone = audio.createOscillator();
    const gain = audio.createGain();
    tone.frequency.value = 660;
    gain.gain.value = 0.08;
    tone.connect(gain).connect(audio.destination);
    tone.start();
    tone.stop(audio.currentTime + 0.12);
    tone.onended = () => void audio.close();
  } catch {
    // no audio here
  }
}

/** The name this browser plays under (the lobby's name field), "web" when empty. */
function playerName(): string {
  return $<HTMLInputElement>("#player-name").value.trim() || "web";
}

// ----- replays -----

/** The URL fragment of a replay at one event: `replay/games/<id>/<event>`, shareable. */
function replayHash(game: string, event: number): string {
  return `replay/${game}/${event}`;
}

// The replay on screen: its game's names and its last event, loaded once per game.
let replaying: { game: string; names: Map<number, string>; last: number; at: number } | undefined;

/** Shows game `name` after its event `at` (a finished game's ExportGame-backed replay): the
 * table, every hand with both faces, and the event in words. */
async function showReplay(name: string, at: number): Promise<void> {
  clearError();
  screen("replay");
  try {
    if (replaying?.game !== name) {
      const { game } = await client.getGame({ name });
      replaying = { game: name, names: game ? seatNames(game) : new Map(), last: 0, at: 0 };
    }
    const r = await client.getReplay({ game: name, version: BigInt(Math.max(1, at)) });
    const state = replaying;
    if (!state || state.game !== name) return;
    state.last = Number(r.lastVersion);
    state.at = Number(r.version);
    renderReplay(state, r.table, r.seats, r.event);
  } catch (error) {
    showError(error);
  }
}

function renderReplay(
  state: { game: string; names: Map<number, string>; last: number; at: number },
  table: View | undefined,
  seats: View[],
  event: Event | undefined,
): void {
  const who = (seat: number) => state.names.get(seat) ?? `seat ${seat}`;
  $("#replay-title").textContent = `Replay of ${state.game}`;
  $("#replay-position").textContent = `Event ${state.at} of ${state.last}`;
  const slider = $<HTMLInputElement>("#replay-slider");
  slider.max = String(state.last);
  slider.value = String(state.at);
  $<HTMLAnchorElement>("#replay-share").href = `#${replayHash(state.game, state.at)}`;
  for (const [id, target] of [
    ["#replay-first", 1],
    ["#replay-back", state.at - 1],
    ["#replay-forward", state.at + 1],
    ["#replay-last", state.last],
  ] as const) {
    const b = $<HTMLButtonElement>(id);
    b.disabled = target < 1 || target > state.last || target === state.at;
  }
  if (!table) return;
  const side = table.ruleset === Ruleset.CLASSIC ? "classic" : table.side === Side.DARK ? "dark side" : "light side";
  const words = event ? (eventWords(event, who, table.side) ?? (event.kind.case === "turnStarted" ? `${who(event.kind.value.seat)}'s turn.` : "")) : "";
  $("#replay-event").textContent = words;
  const top = table.discard.at(-1);
  $("#replay-status").replaceChildren(
    el("span", {}, `Round ${table.round}`),
    el("span", {}, side),
    el("span", {}, table.direction === Direction.COUNTER_CLOCKWISE ? "counter-clockwise ↺" : "clockwise ↻"),
    el("span", { class: `swatch c-${colorName(table.color) || "none"}` }, `color: ${colorName(table.color) || "to be chosen"}`),
    el("span", {}, table.awaiting === Awaiting.MATCH_OVER ? "The match is over." : `Turn: ${who(table.turn)}`),
    el("span", {}, `draw pile ${table.drawCount}`),
    top ? cardElement(top, table.side, { role: "img" }, "div") : "",
  );
  $("#replay-hands").replaceChildren(
    ...table.players.map((p) => {
      const hand = [...(seats[p.seat]?.hand ?? [])].sort((a, b) => sortKey(a, table.side) - sortKey(b, table.side));
      return el(
        "li",
        { "data-seat": String(p.seat), class: p.seat === table.turn ? "turn" : "" },
        el("h3", {}, `${who(p.seat)}: ${p.cardCount} cards, score ${p.score}`),
        el("div", { class: "replay-hand" }, ...hand.map((c) => cardElement(c, table.side, { "data-card-id": String(c.id), role: "img" }, "div"))),
      );
    }),
  );
}

function stepReplay(to: number): void {
  const state = replaying;
  if (!state || to < 1 || to > state.last) return;
  history.replaceState(null, "", `#${replayHash(state.game, to)}`);
  void showReplay(state.game, to);
}

function buildReplay(): void {
  const moves: [string, () => number][] = [
    ["#replay-first", () => 1],
    ["#replay-back", () => (replaying?.at ?? 1) - 1],
    ["#replay-forward", () => (replaying?.at ?? 0) + 1],
    ["#replay-last", () => replaying?.last ?? 1],
  ];
  for (const [id, target] of moves) $(id).addEventListener("click", () => stepReplay(target()));
  $<HTMLInputElement>("#replay-slider").addEventListener("change", (e) => stepReplay(Number((e.target as HTMLInputElement).value)));
  document.addEventListener("keydown", (e) => {
    if ($("#replay").hidden || (e.target instanceof HTMLInputElement && e.target.type === "range")) return;
    if (e.key === "ArrowRight") stepReplay((replaying?.at ?? 0) + 1);
    if (e.key === "ArrowLeft") stepReplay((replaying?.at ?? 1) - 1);
  });
  $("#replay-lobby").addEventListener("click", () => {
    location.hash = "";
  });
}

// ----- start -----

function route(): void {
  const game = decodeURIComponent(location.hash.slice(1));
  const replay = /^replay\/(.+)\/(\d+)$/.exec(game);
  const invited = /^join\/([A-Za-z0-9-]{6,12})$/.exec(game);
  if (invited) {
    leaveScreens();
    screen("lobby");
    void join(invited[1]);
  } else if (replay) {
    leaveScreens();
    void showReplay(replay[1], Number(replay[2]));
  } else if (game) {
    // A seat this browser holds, else the game as a spectator sees it.
    void enter(loadSeat(game) ?? { game }).catch(showError);
  } else {
    leaveScreens();
    screen("lobby");
    void listGames();
    void showMyGames();
    void showLeaderboard();
  }
}

buildLobby();
buildReplay();
$("#uno-toggle").addEventListener("change", () => table?.rerender());
// Preferences kept in this browser: the name, sorting the hand, the sound.
const name = $<HTMLInputElement>("#player-name");
name.value = localStorage.getItem("unoflip:name") ?? "";
name.addEventListener("change", () => localStorage.setItem("unoflip:name", name.value.trim()));
for (const [id, fallback] of [["sort-hand", true], ["sound", false]] as const) {
  const box = $<HTMLInputElement>(`#${id}`);
  const kept = localStorage.getItem(`unoflip:${id}`);
  box.checked = kept === null ? fallback : kept === "1";
  box.addEventListener("change", () => {
    localStorage.setItem(`unoflip:${id}`, box.checked ? "1" : "0");
    table?.rerender();
  });
}
for (const id of ["#leave", "#waiting-lobby"]) {
  $(id).addEventListener("click", () => {
    location.hash = "";
  });
}
window.addEventListener("hashchange", route);
route();
