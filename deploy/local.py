"""Run the real servers of the pipeline as local processes (no Docker).

    python -m deploy.local up [kafka|elasticsearch|triton ...]
    python -m deploy.local prepare [names ...]     (Maven jars, Triton backends; no start)
    python -m deploy.local down [names ...]
    python -m deploy.local status
    python -m deploy.local logs [name] [-n N]
    python -m deploy.local topics posts.raw posts.tagged ... [--retention-hours H]

Ports and paths come from NLP_* variables (see services/settings.py); state (configs, data,
logs, pid records) lives in NLP_STATE_DIR, default var/.
"""

from __future__ import annotations

import argparse
import sys
import time

from deploy.process import DeployError, tail
from deploy.stack import SERVERS, server, servers, status
from services.settings import Settings

MIB = 2**20


def cmd_up(args: argparse.Namespace, settings: Settings) -> int:
    for srv in servers(args.names, settings):
        print(f"{srv.name}: starting (log: {srv.log_path})", flush=True)
        began = time.monotonic()
        record, started = srv.start(timeout=args.timeout)
        took = time.monotonic() - began
        verb = f"started in {took:.1f}s" if started else "already running"
        where = ", ".join(f"{k} {v}" for k, v in srv.as_started(record).endpoints().items())
        print(f"{srv.name}: up, {verb} (pid {record.pid}; {where})", flush=True)
        if not started and record.settings and record.settings != settings.to_dict():
            print(
                f"  note: {srv.name} runs with the settings it was started with; "
                f"`down {srv.name}` first to apply the current NLP_* values",
                flush=True,
            )
    return 0


def cmd_prepare(args: argparse.Namespace, settings: Settings) -> int:
    for srv in servers(args.names, settings):
        began = time.monotonic()
        srv.install()
        print(f"{srv.name}: ready to start ({time.monotonic() - began:.1f}s)", flush=True)
    return 0


def cmd_down(args: argparse.Namespace, settings: Settings) -> int:
    for srv in reversed(servers(args.names, settings)):
        stopped = srv.stop(timeout=args.timeout)
        print(f"{srv.name}: {'stopped' if stopped else 'not running'}", flush=True)
    return 0


def cmd_status(args: argparse.Namespace, settings: Settings) -> int:
    rss = pss = 0
    print(f"state dir: {settings.state_dir}")
    for srv in servers(args.names, settings):
        st = status(srv)
        rss += st.rss_bytes
        pss += st.pss_bytes
        where = ", ".join(f"{k} {v}" for k, v in st.endpoints.items())
        if not st.up:
            print(f"{st.name:<14} down     ({where})")
            continue
        state = "up" if st.healthy else "starting/unhealthy"
        print(
            f"{st.name:<14} {state:<8} pid {st.pid:<8} rss {st.rss_bytes / MIB:6.0f} MiB "
            f"(pss {st.pss_bytes / MIB:.0f}) in {st.processes} proc, up {st.uptime_s:.0f}s "
            f"({where})"
        )
        if st.name == "triton" and st.healthy:
            print_model_versions(settings)
    print(f"{'total':<14} rss {rss / MIB:.0f} MiB, pss {pss / MIB:.0f} MiB")
    return 0


def print_model_versions(settings: Settings) -> None:
    """One line per model: the version Triton serves and any on disk it never served."""
    from nlp_models.registry import MODELS
    from training.publish import Options, PublishError, versions

    options = Options(settings.model_repository, settings.triton_http_url)
    for model in MODELS:
        try:
            info = versions(model, options)
        except PublishError as exc:
            print(f"  {model:<31} {exc}")
            continue
        disk = ", ".join(f"{row['version']} {row['state']}" for row in info["versions"])
        newest = info["newest_on_disk"]
        hint = (f"; to serve {newest}: python -m training switch {model}"
                if info["serving"] is not None and newest != info["serving"] else "")
        print(f"  {model:<31} serving {info['serving']} (on disk: {disk}){hint}")


def cmd_logs(args: argparse.Namespace, settings: Settings) -> int:
    names = [args.name] if args.name else list(SERVERS)
    for name in names:
        srv = server(name, settings)
        if len(names) > 1:
            print(f"==> {srv.log_path} <==")
        print(tail(srv.log_path, args.n) or "(no log yet)", end="")
    return 0


def cmd_topics(args: argparse.Namespace, settings: Settings) -> int:
    from services.kafka_topics import alter_topic_configs, ensure_topics, retention_ms

    if args.retention_hours is not None and args.retention_hours <= 0:
        raise ValueError("--retention-hours must be above 0")
    created = ensure_topics(settings.kafka_bootstrap, args.topics, args.partitions)
    print(f"created: {', '.join(created) or 'none (all exist)'}")
    if args.retention_hours is not None:
        for topic in args.topics:
            alter_topic_configs(settings.kafka_bootstrap, topic,
                                {"retention.ms": retention_ms(args.retention_hours / 24)})
        print(f"retention: {args.retention_hours:g} h on {', '.join(args.topics)}")
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m deploy.local",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="command", required=True)
    names = dict(nargs="*", metavar="name", help=f"any of {', '.join(SERVERS)} (default: all)")
    up = sub.add_parser("up", help="start servers and wait until healthy")
    up.add_argument("names", **names)
    up.add_argument("--timeout", type=float, default=None, help="seconds per server")
    up.set_defaults(func=cmd_up)
    prep = sub.add_parser("prepare", help="resolve jars and binaries without starting")
    prep.add_argument("names", **names)
    prep.set_defaults(func=cmd_prepare)
    down = sub.add_parser("down", help="stop the servers this state dir started")
    down.add_argument("names", **names)
    down.add_argument("--timeout", type=float, default=30.0, help="seconds before SIGKILL")
    down.set_defaults(func=cmd_down)
    st = sub.add_parser("status", help="up/down, pid, ports, RSS per server")
    st.add_argument("names", **names)
    st.set_defaults(func=cmd_status)
    logs = sub.add_parser("logs", help="last lines of a server log")
    logs.add_argument("name", nargs="?", choices=[*SERVERS, "es"])
    logs.add_argument("-n", type=int, default=50, help="number of lines")
    logs.set_defaults(func=cmd_logs)
    topics = sub.add_parser("topics", help="create Kafka topics if missing, keep their "
                            "configs (services/kafka_topics.py)")
    topics.add_argument("topics", nargs="+")
    topics.add_argument("--partitions", type=int, default=4)
    topics.add_argument("--retention-hours", type=float, default=None,
                        help="keep the topics' records this long after they arrived "
                        "(default: the broker's 24 h; docs/operations.md#backfills-and-retention)")
    topics.set_defaults(func=cmd_topics)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        settings = Settings.from_env()
        return args.func(args, settings)
    except (DeployError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(
            "interrupted; run `python -m deploy.local down` to stop what started", file=sys.stderr
        )
        return 130


if __name__ == "__main__":
    sys.exit(main())
