// A small typed wrapper over the generated service: games, seats, moves with request ids, a
// seat's stream that resumes from its last event by itself, and refusals as `UnoflipError` with
// their stable reason. Any Connect-ES transport works: Connect (JSON or binary) or gRPC-web, from
// @connectrpc/connect-web in browsers and React Native or @connectrpc/connect-node in Node.

import { Code, ConnectError, createClient, type CallOptions, type Client, type Transport } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import type { Action, ActionSchema, Game, GameOptionsSchema, View } from "./gen/unoflip/v1/game_pb.js";
import {
  UnoFlipService,
  type FindMatchResponse,
  type SubmitActionResponse,
  type SubscribeResponse,
} from "./gen/unoflip/v1/service_pb.js";

/** The generated client of the whole service, for the calls the wrapper does not cover. */
export type ServiceClient = Client<typeof UnoFlipService>;

/** A refusal: its gRPC/Connect code, its stable UPPER_SNAKE reason (docs/api.md lists them all),
 * and the server's message. */
export class UnoflipError extends Error {
  constructor(
    readonly code: Code,
    readonly reason: string,
    message: string,
    readonly cause?: unknown,
  ) {
    super(message);
    this.name = "UnoflipError";
  }

  /** Whether trying again (with the same request id) may succeed. */
  get retryable(): boolean {
    return RETRYABLE.has(this.code);
  }

  /** `error` as an UnoflipError (a ConnectError keeps its code and reason). */
  static from(error: unknown): UnoflipError {
    if (error instanceof UnoflipError) return error;
    const connect = ConnectError.from(error);
    return new UnoflipError(connect.code, reasonOf(connect), connect.rawMessage, error);
  }
}

/** The codes of failures that are not the request's fault. */
const RETRYABLE = new Set<Code>([Code.Unavailable, Code.Aborted, Code.DeadlineExceeded, Code.Unknown]);

/** The reason of a refusal's google.rpc.ErrorInfo detail ("" without one). */
export function reasonOf(error: ConnectError): string {
  for (const detail of error.details) {
    if (!("type" in detail) || detail.type !== "google.rpc.ErrorInfo") continue;
    // ErrorInfo { string reason = 1; string domain = 2; map<string, string> metadata = 3; }
    const reader = new BinaryReader(detail.value);
    while (reader.pos < reader.len) {
      const [field, wireType] = reader.tag();
      if (field === 1 && wireType === WireType.LengthDelimited) return reader.string();
      reader.skip(wireType, field);
    }
  }
  return "";
}

/** Runs `call`, turning its refusal into an UnoflipError. */
async function refusals<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw UnoflipError.from(error);
  }
}

/** A fresh request id (random; React Native may lack crypto.randomUUID). */
export function requestId(): string {
  const crypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (crypto?.randomUUID) return crypto.randomUUID();
  let id = "";
  for (let i = 0; i < 32; i++) id += Math.floor(Math.random() * 16).toString(16);
  return id;
}

function bearer(token: string, options: CallOptions = {}): CallOptions {
  return { ...options, headers: { ...(options.headers as Record<string, string>), authorization: `Bearer ${token}` } };
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** What a seat holds: its game, its number and its token (keep it to come back). */
export interface SeatKey {
  game: string;
  seat: number;
  token: string;
}

/** How to join a game. */
export interface JoinOptions {
  /** The seat to take; the first open one when absent. */
  seat?: number;
  /** The name shown at the table. */
  name?: string;
  /** A registered player (`players/{id}`) and its token, to make the seat the player's. */
  player?: { name: string; token: string };
}

/** The service, over `transport`. */
export class Unoflip {
  /** The generated client, for every call. */
  readonly rpc: ServiceClient;

  constructor(transport: Transport) {
    this.rpc = createClient(UnoFlipService, transport);
  }

  /** Creates a game with open seats (and server-played seats, `botSeats`). */
  async createGame(options: MessageInitShape<typeof GameOptionsSchema>): Promise<Game> {
    const answer = await refusals(() => this.rpc.createGame({ options }));
    if (!answer.game) throw new UnoflipError(Code.Internal, "", "CreateGame answered without a game");
    return answer.game;
  }

  /** One game. */
  async getGame(name: string): Promise<Game> {
    const answer = await refusals(() => this.rpc.getGame({ name }));
    if (!answer.game) throw new UnoflipError(Code.Internal, "", "GetGame answered without a game");
    return answer.game;
  }

  /** Takes a seat of `game`. */
  async join(game: string, options: JoinOptions = {}): Promise<Seat> {
    const call: CallOptions = options.player ? bearer(options.player.token) : {};
    const answer = await refusals(() =>
      this.rpc.joinGame(
        { game, seat: options.seat, playerName: options.name ?? "", player: options.player?.name ?? "" },
        call,
      ),
    );
    return new Seat(this, { game, seat: answer.seat, token: answer.seatToken });
  }

  /** A seat held before (its key kept from `join`). */
  seat(key: SeatKey): Seat {
    return new Seat(this, key);
  }

  /** Registers a player: its name (`players/{id}`) and token (shown once). */
  async registerPlayer(displayName: string, bot = false): Promise<{ name: string; token: string }> {
    const answer = await refusals(() => this.rpc.registerPlayer({ displayName, bot }));
    return { name: answer.player?.name ?? "", token: answer.playerToken };
  }

  /** Quick play: waits in the queue, then the seat it was given. `onWait` hears the queue. */
  async findMatch(
    player: { name: string; token: string },
    options: MessageInitShape<typeof GameOptionsSchema>,
    more: { botFill?: boolean; botFillAfterSeconds?: number; signal?: AbortSignal; onWait?: (update: FindMatchResponse) => void } = {},
  ): Promise<Seat> {
    return refusals(async () => {
      const stream = this.rpc.findMatch(
        { player: player.name, options, botFill: more.botFill ?? false, botFillAfterSeconds: more.botFillAfterSeconds ?? 0 },
        bearer(player.token, { signal: more.signal }),
      );
      for await (const update of stream) {
        if (update.update.case === "found") {
          const found = update.update.value;
          return new Seat(this, { game: found.game?.name ?? "", seat: found.seat, token: found.seatToken });
        }
        more.onWait?.(update);
      }
      throw new UnoflipError(Code.Unavailable, "", "the match stream ended without a match");
    });
  }
}

/** One seat of one game, by its token. */
export class Seat {
  constructor(
    readonly client: Unoflip,
    readonly key: SeatKey,
  ) {}

  get game(): string {
    return this.key.game;
  }

  get number(): number {
    return this.key.seat;
  }

  private auth(options?: CallOptions): CallOptions {
    return bearer(this.key.token, options);
  }

  /** Deals the first round once every seat is taken. */
  async start(): Promise<Game> {
    const answer = await refusals(() => this.client.rpc.startGame({ game: this.game }, this.auth()));
    return answer.game ?? this.client.getGame(this.game);
  }

  /** The table as this seat sees it, with its legal actions. */
  async view(): Promise<View> {
    const answer = await refusals(() => this.client.rpc.getView({ game: this.game }, this.auth()));
    if (!answer.view) throw new UnoflipError(Code.Internal, "", "GetView answered without a view");
    return answer.view;
  }

  /** Makes a move. It carries a request id, so that when the answer is lost it is retried (up to
   * `retries` times) and still counts once; with `expectedVersion` it is refused
   * (VERSION_MISMATCH) if anything happened since. */
  async act(
    action: Action | MessageInitShape<typeof ActionSchema>,
    options: { expectedVersion?: bigint; requestId?: string; retries?: number } = {},
  ): Promise<SubmitActionResponse> {
    const id = options.requestId ?? requestId();
    const retries = options.retries ?? 3;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.client.rpc.submitAction(
          { game: this.game, action, requestId: id, expectedVersion: options.expectedVersion },
          this.auth(),
        );
      } catch (error) {
        const refusal = UnoflipError.from(error);
        if (!refusal.retryable || attempt >= retries) throw refusal;
        await sleep(100 * 2 ** attempt);
      }
    }
  }

  /** Leaves the seat; the server plays it from then on. */
  async leave(): Promise<Game> {
    const answer = await refusals(() => this.client.rpc.leaveGame({ game: this.game }, this.auth()));
    return answer.game ?? this.client.getGame(this.game);
  }

  /** The rematch of this finished game (the same one for every player who asks). */
  async rematch(): Promise<Game> {
    const answer = await refusals(() => this.client.rpc.rematch({ game: this.game }, this.auth()));
    if (!answer.game) throw new UnoflipError(Code.Internal, "", "Rematch answered without a game");
    return answer.game;
  }

  /** The seat's stream: a view, then every event (and a prompt whenever the seat may act), for
   * as long as it is read. When the connection drops it comes back by itself, from the last
   * event received, so no event is missed or repeated; a refusal ends it with an UnoflipError.
   * Heartbeats are passed over. */
  async *events(options: { afterVersion?: bigint; signal?: AbortSignal; retryDelayMs?: number } = {}): AsyncGenerator<SubscribeResponse> {
    let after = options.afterVersion ?? 0n;
    let failures = 0;
    while (!options.signal?.aborted) {
      try {
        const stream = this.client.rpc.subscribe(
          { game: this.game, afterVersion: after, includeView: after === 0n },
          this.auth({ signal: options.signal }),
        );
        for await (const message of stream) {
          failures = 0;
          if (message.kind.case === "heartbeat") continue;
          if (message.kind.case === "event" && message.kind.value.version > after) after = message.kind.value.version;
          if (message.kind.case === "view" && message.kind.value.version > after) after = message.kind.value.version;
          yield message;
        }
        return;
      } catch (error) {
        if (options.signal?.aborted) return;
        const refusal = UnoflipError.from(error);
        // A stream the server ended while stopping, or a dropped connection: resume.
        if (!(refusal.retryable || refusal.code === Code.Canceled) || failures >= 8) throw refusal;
        failures++;
        await sleep((options.retryDelayMs ?? 200) * failures, options.signal);
      }
    }
  }
}
