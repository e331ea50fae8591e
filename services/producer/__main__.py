"""Replay a JSONL feed into Kafka as protobuf, keyed by id.

    python -m services.producer --file deploy/sample_data/tweets.jsonl --topic posts.raw \
        [--rate 200] [--limit 500] [--kind posts|articles] [--strict]

kafka-python producer with acks=all (a replayed record is only counted once the broker
has it) and max_request_size just under the broker's 2 MiB message limit. Bad lines are
reported with their line number and skipped unless ``--strict``.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

from kafka import KafkaProducer
from kafka.errors import KafkaError
from tqdm import tqdm

from services.credentials import KafkaSecurity
from services.limits import MAX_RAW_BYTES
from services.producer.feed import FeedError, Record, count_lines, read_feed
from services.producer.ratelimit import TokenBucket
from services.settings import Settings


@dataclass
class Counts:
    sent: int = 0
    delivered: int = 0
    bad_lines: int = 0
    failed: list[str] = field(default_factory=list)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m services.producer", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--file", required=True, type=Path, help="JSONL feed")
    p.add_argument("--topic", required=True)
    p.add_argument("--kind", choices=["posts", "articles"], default="posts")
    p.add_argument("--rate", type=float, default=0, help="messages per second (0 = no limit)")
    p.add_argument("--limit", type=int, default=0, help="stop after N messages (0 = all)")
    p.add_argument("--bootstrap", default=None, help="default: from NLP_KAFKA_PORT")
    p.add_argument("--compression", choices=["none", "gzip", "lz4", "zstd", "snappy"],
                   default="none")
    p.add_argument("--strict", action="store_true", help="stop at the first bad line")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p.parse_args(argv)


def make_producer(bootstrap: str, compression: str) -> KafkaProducer:
    return KafkaProducer(
        bootstrap_servers=bootstrap,
        acks="all",
        max_request_size=MAX_RAW_BYTES - 1024,  # leave room for the record batch header
        compression_type=None if compression == "none" else compression,
        linger_ms=20,
        retries=5,
        client_id="nlp-replay",
        **KafkaSecurity.from_env().kafka_options(),
    )


def send(producer: KafkaProducer, topic: str, record: Record, counts: Counts) -> None:
    def ok(_meta: object) -> None:
        counts.delivered += 1

    def failed(exc: BaseException) -> None:
        counts.failed.append(f"line {record.lineno}: {type(exc).__name__}: {exc}")

    producer.send(topic, key=record.key, value=record.value).add_callback(ok).add_errback(failed)
    counts.sent += 1


def replay(args: argparse.Namespace, producer: KafkaProducer) -> Counts:
    counts = Counts()
    bucket = TokenBucket(args.rate) if args.rate > 0 else None
    total = count_lines(args.file)
    if args.limit:
        total = min(total, args.limit)
    with args.file.open(encoding="utf-8") as fh, tqdm(
        total=total, unit="msg", disable=args.quiet, file=sys.stderr
    ) as bar:
        for item in read_feed(fh, args.kind):
            if isinstance(item, FeedError):
                counts.bad_lines += 1
                tqdm.write(f"{args.file}: {item}", file=sys.stderr)
                if args.strict:
                    break
                continue
            if bucket:
                bucket.acquire()
            send(producer, args.topic, item, counts)
            bar.update(1)
            if args.limit and counts.sent >= args.limit:
                break
    producer.flush()
    return counts


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    bootstrap = args.bootstrap or Settings.from_env().kafka_bootstrap
    try:
        producer = make_producer(bootstrap, args.compression)
    except KafkaError as exc:  # nothing answers, or it refused our security settings
        print(f"cannot connect to Kafka at {bootstrap}: {type(exc).__name__}: {exc} "
              "(is it up? do NLP_KAFKA_SECURITY_PROTOCOL and the credentials match its "
              "listener?)", file=sys.stderr)
        return 2
    try:
        counts = replay(args, producer)
    finally:
        producer.close()
    for line in counts.failed:
        print(f"not delivered: {line}", file=sys.stderr)
    print(f"{args.topic}: sent {counts.sent}, delivered {counts.delivered}, "
          f"failed {len(counts.failed)}, bad lines {counts.bad_lines}")
    if counts.failed or (args.strict and counts.bad_lines):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
