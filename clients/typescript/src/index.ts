// @unoflip/client: the unoflip service for TypeScript, over any Connect-ES transport.
//
//   import { createConnectTransport } from "@connectrpc/connect-web"; // or -node
//   import { Unoflip } from "@unoflip/client";
//   const unoflip = new Unoflip(createConnectTransport({ baseUrl: "http://127.0.0.1:50051" }));
//   const game = await unoflip.createGame({ seats: 2, botSeats: [1] });
//   const seat = await unoflip.join(game.name);
//   await seat.start();
//   for await (const message of seat.events()) { ... }

export * from "./client.js";
export * from "./gen/unoflip/v1/cards_pb.js";
export * from "./gen/unoflip/v1/game_pb.js";
export * from "./gen/unoflip/v1/service_pb.js";
