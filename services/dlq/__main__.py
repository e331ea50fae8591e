"""Dead letters as an operator's tool: read them, and send the retriable ones back.

    python -m services.dlq inspect posts.raw.dlq [--since 2h] [--code MODEL_ERROR] [--limit 20]
    python -m services.dlq replay  posts.raw.dlq  --code INTERNAL_ERROR [--since ...] [--dry-run]

``inspect`` prints one line per dead letter (when, code, where it came from, sizes, reason)
and a count per code. ``replay`` produces each selected letter's original key and value
back onto its source topic (or ``--to``), so a record that failed for a reason since fixed
(a model bug, an outage past a finite wait) goes through the pipeline again; downstream
writes are idempotent, so replaying twice does no harm. Letters whose original was cut to
fit the dead-letter topic cannot be replayed and are counted as ``incomplete``. Both print
a JSON summary as the last line. The broker comes from ``NLP_KAFKA_HOST``/``NLP_KAFKA_PORT``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from kafka import KafkaConsumer, KafkaProducer

from services.config import PipelineConfig
from services.credentials import KafkaSecurity
from services.dlq import is_complete
from services.limits import MAX_RAW_BYTES
from services.pb import messages_pb2 as pb

DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")
UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def parse_since(text: str, now: datetime) -> datetime:
    """``2h``, ``30m``, ``7d`` (before ``now``) or an ISO time (UTC if no offset)."""
    match = DURATION.match(text.strip())
    if match:
        return now - timedelta(**{UNITS[match[2]]: float(match[1])})
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--since {text!r}: expected a duration like 2h, 30m, 7d or an ISO time") from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def read_letters(bootstrap: str, topic: str) -> Iterator[tuple[int, int, pb.DeadLetter]]:
    """Every dead letter on ``topic`` from the start: (partition, offset, letter)."""
    consumer = KafkaConsumer(
        topic, bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
        auto_offset_reset="earliest", consumer_timeout_ms=3000,
        fetch_max_bytes=4 * MAX_RAW_BYTES, max_partition_fetch_bytes=2 * MAX_RAW_BYTES,
        **KafkaSecurity.from_env().kafka_options(),
    )
    try:
        for record in consumer:
            try:
                yield record.partition, record.offset, pb.DeadLetter.FromString(record.value)
            except Exception as exc:  # noqa: BLE001 - a foreign record must not stop the read
                print(f"warning: {topic}/{record.partition}@{record.offset} is not a "
                      f"DeadLetter ({exc}); skipped", file=sys.stderr)
    finally:
        consumer.close()


def selected(letters: Iterator[tuple[int, int, pb.DeadLetter]], since: datetime | None,
             codes: set[str]) -> Iterator[tuple[int, int, pb.DeadLetter]]:
    for partition, offset, letter in letters:
        if codes and letter.error_code not in codes:
            continue
        if since is not None and letter.failed_at.ToDatetime(tzinfo=UTC) < since:
            continue
        yield partition, offset, letter


def describe(partition: int, offset: int, letter: pb.DeadLetter) -> str:
    when = letter.failed_at.ToDatetime(tzinfo=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    key = letter.original_key.decode("utf-8", "replace")[:40]
    cut = "" if is_complete(letter) else " (cut)"
    return (f"{partition}@{offset}  {when}  {letter.error_code:<14} "
            f"{letter.source_topic}/{letter.partition}@{letter.offset}  key={key!r}  "
            f"{letter.original_value_size} bytes{cut}\n    {letter.reason[:500]}")


def inspect(args: argparse.Namespace, bootstrap: str) -> dict[str, object]:
    by_code: Counter[str] = Counter()
    shown = 0
    for partition, offset, letter in selected(read_letters(bootstrap, args.topic),
                                              args.since, set(args.code)):
        by_code[letter.error_code] += 1
        if shown < args.limit:
            print(describe(partition, offset, letter))
            shown += 1
    return {"topic": args.topic, "letters": sum(by_code.values()), "by_code": dict(by_code)}


def replay(args: argparse.Namespace, bootstrap: str) -> dict[str, object]:
    producer = None if args.dry_run else KafkaProducer(
        bootstrap_servers=bootstrap, acks="all", max_request_size=MAX_RAW_BYTES,
        **KafkaSecurity.from_env().kafka_options())
    counts: Counter[str] = Counter()
    try:
        for partition, offset, letter in selected(read_letters(bootstrap, args.topic),
                                                  args.since, set(args.code)):
            counts["selected"] += 1
            if not is_complete(letter):
                counts["incomplete"] += 1
                continue
            target = args.to or letter.source_topic
            if producer is not None:
                producer.send(target, key=letter.original_key or None,
                              value=letter.original_value).get(timeout=60)
            counts["replayed"] += 1
            print(f"{partition}@{offset} -> {target} (key {letter.original_key[:40]!r})")
    finally:
        if producer is not None:
            producer.close()
    return {"topic": args.topic, "dry_run": args.dry_run, "selected": counts["selected"],
            "replayed": counts["replayed"], "incomplete": counts["incomplete"]}


def parser(now: datetime) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m services.dlq", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    for name, help_ in (("inspect", "print dead letters and a count per code"),
                        ("replay", "send the originals back to their source topic")):
        s = sub.add_parser(name, help=help_)
        s.add_argument("topic", help="a dead-letter topic, e.g. posts.raw.dlq")
        s.add_argument("--since", type=lambda t: parse_since(t, now), default=None,
                       help="only letters that failed after this (2h, 7d, or ISO time)")
        s.add_argument("--code", action="append", default=[],
                       help="only this error code (repeatable), e.g. MODEL_ERROR")
    sub.choices["inspect"].add_argument("--limit", type=int, default=20,
                                        help="lines to print (all are counted; default 20)")
    sub.choices["replay"].add_argument("--to", default="", help="another target topic")
    sub.choices["replay"].add_argument("--dry-run", action="store_true",
                                       help="list what would be replayed, send nothing")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser(datetime.now(UTC)).parse_args(argv)
    bootstrap = PipelineConfig.from_env().servers.kafka_bootstrap
    command = inspect if args.command == "inspect" else replay
    print(json.dumps(command(args, bootstrap)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
