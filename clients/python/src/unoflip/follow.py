"""Follows every game's public events from NATS JetStream and prints them as words.

A server started with `unoflip serve --publish nats://127.0.0.1:4222` publishes each event's
public projection (a `unoflip.v1.GameEvent`) on `unoflip.v1.games.<game id>.events`, exactly once
and in order. This reads them with a pull consumer:

    pip install -e './clients/python[nats]'
    unoflip-follow --nats nats://127.0.0.1:4222 --durable my-follower

With `--durable NAME` the consumer is kept by NATS: each event is acknowledged once printed, and
running the same command again goes on after the last one printed (even after a crash of this
program). Without it, every event still in the stream is printed from the first.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TextIO

import nats
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

from unoflip.v1 import service_pb2
from unoflip.words import describe_event

SUBJECTS = "unoflip.v1.games.*.events"


def describe(event: service_pb2.GameEvent) -> str:
    """One line for one published event: the game, the event's number, what happened."""
    return f"{event.game} #{event.event.version}: {describe_event(event.event)}"


async def follow(
    url: str,
    *,
    stream: str = "UNOFLIP_EVENTS",
    durable: str | None = None,
    idle_exit: float | None = None,
    out: TextIO = sys.stdout,
) -> int:
    """Prints every event after the consumer's place; returns how many it printed. Runs until
    interrupted, or until nothing came for `idle_exit` seconds."""
    client = await nats.connect(url)
    try:
        js = client.jetstream()
        config = ConsumerConfig(
            durable_name=durable,
            deliver_policy=DeliverPolicy.ALL,
            ack_policy=AckPolicy.EXPLICIT,
            filter_subject=SUBJECTS,
        )
        subscription = await js.pull_subscribe(SUBJECTS, durable=durable, stream=stream, config=config)
        printed = 0
        while True:
            try:
                messages = await subscription.fetch(256, timeout=idle_exit or 5.0)
            except asyncio.TimeoutError:
                # nats-py raises its own TimeoutError (a subclass) or, since 2.16 when the
                # deadline runs out between its requests, asyncio's: both mean nothing came.
                if idle_exit is not None:
                    return printed
                continue
            for message in messages:
                event = service_pb2.GameEvent.FromString(message.data)
                print(describe(event), file=out, flush=True)
                await message.ack()
                printed += 1
    finally:
        await client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nats", default="nats://127.0.0.1:4222", help="the NATS server")
    parser.add_argument("--stream", default="UNOFLIP_EVENTS", help="the server's --publish-stream")
    parser.add_argument("--durable", help="a durable consumer's name: resume where it stopped")
    parser.add_argument(
        "--idle-exit", type=float, help="stop once nothing came for this many seconds (default: run until interrupted)"
    )
    args = parser.parse_args()
    try:
        asyncio.run(follow(args.nats, stream=args.stream, durable=args.durable, idle_exit=args.idle_exit))
    except KeyboardInterrupt:
        pass
    except BrokenPipeError:
        # The output was closed (`| head`): stop quietly.
        sys.stderr.close()


if __name__ == "__main__":
    main()
