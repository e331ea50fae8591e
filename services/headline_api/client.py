"""Ask the headline API for suggestions and print them as a table (or JSON).

    python -m services.headline_api.client --file article.txt --phrase Toyota -n 3
    python -m services.headline_api.client --text "..." --stream --json

The API key comes from --api-key or NLP_HEADLINE_API_KEY; --tls-ca turns on TLS with that
CA certificate. Exit status 1 with the gRPC status and message when the call fails.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import grpc
from google.protobuf.json_format import MessageToDict

from services.pb import headline_api_pb2 as api
from services.pb import headline_api_pb2_grpc as api_grpc

ORDERS = {"seq-b": api.SEQ_B, "seq-f": api.SEQ_F, "tok-b": api.TOK_B, "tok-f": api.TOK_F}


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
    p.add_argument("--timeout", type=float, default=10.0, help="deadline in seconds")
    return p.parse_args(argv)


def request_of(args: argparse.Namespace) -> api.SuggestRequest:
    text = args.file.read_text(encoding="utf-8") if args.file else args.text
    return api.SuggestRequest(article=text, language=args.lang, required_phrases=args.phrase,
                              num_candidates=args.num, order=ORDERS.get(args.order, 0),
                              max_length=args.max_length, skip_full=args.only_constrained)


def channel(args: argparse.Namespace) -> grpc.Channel:
    if args.tls_ca:
        creds = grpc.ssl_channel_credentials(args.tls_ca.read_bytes())
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
        try:
            if args.stream:
                candidates = []
                for c in stub.SuggestStream(request, timeout=args.timeout, metadata=metadata):
                    candidates.append(c)
                    if not args.json:
                        print(f"[{1000 * (time.perf_counter() - began):.0f} ms] "
                              f"{api.CandidateKind.Name(c.kind).lower()}: {c.text}")
                response = api.SuggestResponse(candidates=candidates)
            else:
                response = stub.Suggest(request, timeout=args.timeout, metadata=metadata)
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
