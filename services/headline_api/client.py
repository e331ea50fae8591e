"""Ask the headline API for suggestions and print them as a table (or JSON).

    python -m services.headline_api.client --file article.txt --phrase Toyota -n 3
    python -m services.headline_api.client --text "..." --stream --json

The API key comes from --api-key or NLP_HEADLINE_API_KEY; --tls-ca turns on TLS with that
CA certificate, --tls-cert/--tls-key add a client certificate (mutual TLS). A busy server
(RESOURCE_EXHAUSTED) or an unreachable one (UNAVAILABLE) is retried up to --retries times
within the --timeout deadline: after the server's `retry-after-ms` hint if it sent one, else
after an exponential backoff, each wait with random jitter so that clients refused together
do not come back together. Exit status 1 with the gRPC status and message when the call
fails.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import grpc
from google.protobuf.json_format import MessageToDict

from services.pb import headline_api_pb2 as api
from services.pb import headline_api_pb2_grpc as api_grpc

ORDERS = {"seq-b": api.SEQ_B, "seq-f": api.SEQ_F, "tok-b": api.TOK_B, "tok-f": api.TOK_F}
RETRYABLE = frozenset({grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNAVAILABLE})
BACKOFF_BASE, BACKOFF_CAP = 0.2, 5.0  # seconds, without a hint: 0.2, 0.4, 0.8, ... 5
T = TypeVar("T")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m services.headline_api.client",
                                description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--file", type=Path, help="article text file (UTF-8)")
    src.add_argument("--text", help="article text")
    p.add_argument("--phrase", action="append", default=[], help="required phrase (repeatable)")
    p.add_argument("-n", "--num", type=int, default=0,
                   help="candidates per generator (1-5; default 3)")
    p.add_argument("--lang", default="", help="en or zh (default: detected)")
    p.add_argument("--order", choices=sorted(ORDERS), help="generation order of constrained ones")
    p.add_argument("--max-length", type=int, default=0, help="longest candidate, characters")
    p.add_argument("--only-constrained", action="store_true", help="no free headlines")
    p.add_argument("--stream", action="store_true", help="use SuggestStream")
    p.add_argument("--json", action="store_true", help="JSON output")
    port = os.environ.get("NLP_HEADLINE_API_PORT", "50051")
    p.add_argument("--address", default=f"127.0.0.1:{port}", help="server host:port")
    p.add_argument("--api-key", default=os.environ.get("NLP_HEADLINE_API_KEY", ""))
    p.add_argument("--tls-ca", type=Path, help="CA certificate (PEM): connect with TLS")
    p.add_argument("--tls-cert", type=Path, help="client certificate (PEM), for mutual TLS")
    p.add_argument("--tls-key", type=Path, help="client private key (PEM), for mutual TLS")
    p.add_argument("--timeout", type=float, default=10.0,
                   help="deadline in seconds, for all attempts together")
    p.add_argument("--retries", type=int, default=5,
                   help="retries of a busy or unavailable server (default 5; 0 = none)")
    return p.parse_args(argv)


def retry_after(err: grpc.RpcError) -> float | None:
    """The server's `retry-after-ms` trailer in seconds, if it sent a valid one."""
    for key, value in err.trailing_metadata() or ():
        if key == "retry-after-ms" and value.isdigit():
            return int(value) / 1000
    return None


def retry_delay(attempt: int, hint: float | None, rng: random.Random) -> float:
    """Seconds to wait before retry `attempt` (0 = the first retry): the server's hint, else
    BACKOFF_BASE doubling up to BACKOFF_CAP; drawn uniformly from 0.5 to 1.5 times that
    (jitter) so that clients refused at the same moment spread out."""
    base = hint if hint is not None else min(BACKOFF_CAP, BACKOFF_BASE * 2**attempt)
    return base * rng.uniform(0.5, 1.5)


def with_retries(call: Callable[[float], T], timeout: float, retries: int,
                 rng: random.Random | None = None,
                 sleep: Callable[[float], None] = time.sleep,
                 say: Callable[[str], None] = lambda m: print(m, file=sys.stderr)) -> T:
    """`call(seconds_left)` until it succeeds, fails with a status that is not RETRYABLE,
    runs out of retries, or the next wait would pass the overall deadline."""
    rng = rng or random.Random()
    deadline = time.monotonic() + timeout
    for attempt in range(retries + 1):
        try:
            return call(max(deadline - time.monotonic(), 0.001))
        except grpc.RpcError as err:
            if err.code() not in RETRYABLE or attempt == retries:
                raise
            hint = retry_after(err)
            delay = retry_delay(attempt, hint, rng)
            if time.monotonic() + delay >= deadline:
                raise
            source = "server hint" if hint is not None else "backoff"
            say(f"{err.code().name}; retry {attempt + 1}/{retries} in {1000 * delay:.0f} ms "
                f"({source})")
            sleep(delay)
    raise AssertionError("unreachable")


def request_of(args: argparse.Namespace) -> api.SuggestRequest:
    text = args.file.read_text(encoding="utf-8") if args.file else args.text
    return api.SuggestRequest(article=text, language=args.lang, required_phrases=args.phrase,
                              num_candidates=args.num, order=ORDERS.get(args.order, 0),
                              max_length=args.max_length, skip_full=args.only_constrained)


def channel(args: argparse.Namespace) -> grpc.Channel:
    if args.tls_ca:
        creds = grpc.ssl_channel_credentials(
            args.tls_ca.read_bytes(),
            private_key=args.tls_key.read_bytes() if args.tls_key else None,
            certificate_chain=args.tls_cert.read_bytes() if args.tls_cert else None)
        return grpc.secure_channel(args.address, creds)
    return grpc.insecure_channel(args.address)


def table(candidates: list[api.HeadlineSuggestion]) -> str:
    rows = [("kind", "phrase", "score", "headline")]
    rows += [(api.CandidateKind.Name(c.kind).lower(), c.phrase or "-", f"{c.score:.2f}", c.text)
             for c in candidates]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    return "\n".join("  ".join(r[i].ljust(widths[i]) for i in range(3)) + "  " + r[3]
                     for r in rows)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    request = request_of(args)
    metadata = [("x-api-key", args.api_key)] if args.api_key else []
    began = time.perf_counter()
    with channel(args) as ch:
        stub = api_grpc.HeadlineServiceStub(ch)

        def stream(seconds: float) -> api.SuggestResponse:
            candidates = []
            for c in stub.SuggestStream(request, timeout=seconds, metadata=metadata):
                candidates.append(c)
                if not args.json:
                    print(f"[{1000 * (time.perf_counter() - began):.0f} ms] "
                          f"{api.CandidateKind.Name(c.kind).lower()}: {c.text}")
            return api.SuggestResponse(candidates=candidates)

        def unary(seconds: float) -> api.SuggestResponse:
            return stub.Suggest(request, timeout=seconds, metadata=metadata)

        try:
            response = with_retries(stream if args.stream else unary, args.timeout,
                                    args.retries)
        except grpc.RpcError as err:
            print(f"error: {err.code().name}: {err.details()}", file=sys.stderr)
            return 1
    if args.json:
        print(json.dumps(MessageToDict(response, preserving_proto_field_name=True),
                         ensure_ascii=False, indent=2))
        return 0
    if not args.stream:
        print(table(list(response.candidates)))
        models = sorted({f"{c.model.name} v{c.model.version}" for c in response.candidates})
        cut = " (article truncated)" if response.truncated else ""
        print(f"\nlanguage {response.language}{cut}; "
              f"{', '.join(models)}; request {response.request_id}; "
              f"{1000 * (time.perf_counter() - began):.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
