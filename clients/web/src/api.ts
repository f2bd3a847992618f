// The connection to the server: the TypeScript package (clients/typescript: the service
// generated from proto/ and its wrapper), over grpc-web to the origin that served this page, and
// the seats this browser holds.

import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { Unoflip } from "@unoflip/client";

/** The service, over grpc-web on the page's own origin (no proxy). */
export const unoflip = new Unoflip(createGrpcWebTransport({ baseUrl: location.origin }));

/** The generated client, for every call. */
export const client = unoflip.rpc;

/** A seat this browser joined: kept in localStorage so that a reload keeps it. */
export interface SeatKey {
  game: string;
  seat: number;
  token: string;
}

const PREFIX = "unoflip:seat:";

export function saveSeat(key: SeatKey): void {
  localStorage.setItem(PREFIX + key.game, JSON.stringify(key));
}

export function loadSeat(game: string): SeatKey | undefined {
  const text = localStorage.getItem(PREFIX + game);
  if (!text) return undefined;
  try {
    const key = JSON.parse(text) as SeatKey;
    return typeof key.token === "string" && typeof key.seat === "number" ? key : undefined;
  } catch {
    return undefined;
  }
}

/** The call options that authorize a seat; without a token, a spectator's. */
export function authorized(token: string | undefined, signal?: AbortSignal) {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  return { headers, signal };
}

/** The registered player this browser plays quick play as, and its token. */
export interface Me {
  player: string;
  token: string;
  name: string;
}

const ME = "unoflip:player";

export function saveMe(me: Me): void {
  localStorage.setItem(ME, JSON.stringify(me));
}

export function loadMe(): Me | undefined {
  const text = localStorage.getItem(ME);
  if (!text) return undefined;
  try {
    const me = JSON.parse(text) as Me;
    return typeof me.player === "string" && typeof me.token === "string" ? me : undefined;
  } catch {
    return undefined;
  }
}
