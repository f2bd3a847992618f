// A bot in Node: creates a game against server bots, joins it, and plays one round from its
// stream, answering each prompt with a legal action (a card when one can be played).
//
//   npm run build && node examples/bot.mjs [http://127.0.0.1:50051] [connect|grpc-web]
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { Unoflip, UnoflipError } from "@unoflip/client";

const baseUrl = process.argv[2] ?? process.env.ADDR ?? "http://127.0.0.1:50051";
const transport =
  process.argv[3] === "grpc-web"
    ? createGrpcWebTransport({ baseUrl, httpVersion: "1.1" })
    : createConnectTransport({ baseUrl, httpVersion: "1.1" });
const unoflip = new Unoflip(transport);

const game = await unoflip.createGame({ seats: 3, botSeats: [1, 2], singleRound: true });
const seat = await unoflip.join(game.name, { name: "node-bot" });
await seat.start();
console.log(`playing ${game.name} as seat ${seat.number}`);
let moves = 0;
for await (const message of seat.events()) {
  if (message.kind.case === "prompt") {
    const { legalActions, version } = message.kind.value;
    const action =
      legalActions.find((a) => a.kind.case === "playCard") ??
      legalActions.find((a) => a.kind.case !== "catchUno");
    if (!action) continue;
    try {
      await seat.act(action, { expectedVersion: version });
      moves++;
    } catch (e) {
      // A prompt the game has moved past (a chance to catch a seat, while the others play on).
      if (!(e instanceof UnoflipError && e.reason === "VERSION_MISMATCH")) throw e;
    }
  } else if (message.kind.case === "event" && message.kind.value.kind.case === "roundEnded") {
    console.log(`round over after ${moves} moves of mine`);
    break;
  }
}
