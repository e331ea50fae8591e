"""Search tagged posts, or articles with their headline candidates.

    python -m services.search obama --tag NNP:obama --since 2010-10-01 --size 5
    python -m services.search --ark-tag ^:obama --json
    python -m services.search --top-hashtags --since 2011-01-01 --until 2011-12-31
    python -m services.search --articles bank --phrase "Bank of America" --size 3
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from services.config import PipelineConfig
from services.es.bulk import make_client
from services.es.template import install_template
from services.search.query import SearchRequest, article_query, build_query, top_hashtags_body
from services.search.render import render_article, render_buckets, render_hit


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m services.search", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("query", nargs="*", help="words that must occur in the text")
    p.add_argument("--tag", action="append", default=[], help="PTB TAG:word, e.g. NNP:obama")
    p.add_argument("--ark-tag", action="append", default=[], help="ARK TAG:word, e.g. ^:obama")
    p.add_argument("--hashtag", action="append", default=[], help="generated hashtag")
    p.add_argument("--user-hashtag", action="append", default=[], help="hashtag in the post")
    p.add_argument("--platform", default="")
    p.add_argument("--since", default="", help="created_at >= (ISO date/time)")
    p.add_argument("--until", default="", help="created_at <= (ISO date/time)")
    p.add_argument("--size", type=int, default=10)
    p.add_argument("--top-hashtags", action="store_true", help="hashtag counts instead of hits")
    p.add_argument("--ark", action="store_true", help="render ARK tags instead of PTB")
    p.add_argument("--articles", action="store_true",
                   help="search articles (words in title, body or candidates) instead of posts")
    p.add_argument("--phrase", default="", help="articles: with this required phrase")
    p.add_argument("--lang", default="", help="articles: language")
    p.add_argument("--json", action="store_true", help="raw JSON output")
    p.add_argument("--index", default=None, help="index pattern (default: <prefix>-*)")
    return p.parse_args(argv)


def to_request(args: argparse.Namespace) -> SearchRequest:
    return SearchRequest(
        text=" ".join(args.query), tags=args.tag, ark_tags=args.ark_tag,
        hashtags=args.hashtag, user_hashtags=args.user_hashtag, platform=args.platform,
        since=args.since, until=args.until, size=args.size,
    )


def print_hits(result: dict[str, Any], tagset: str) -> None:
    total = result["hits"]["total"]["value"]
    hits = result["hits"]["hits"]
    print(f"{total} posts match; showing {len(hits)}\n")
    for hit in hits:
        print(render_hit(hit, tagset) + "\n")


def search_articles(es, cfg: PipelineConfig, args: argparse.Namespace) -> int:
    install_template(es, cfg.article_index_prefix, "articles")
    body = article_query(" ".join(args.query), args.phrase, args.lang, args.size)
    result = es.search(index=args.index or cfg.article_index_pattern, ignore_unavailable=True,
                       allow_no_indices=True, **body)
    if args.json:
        json.dump(result, sys.stdout, ensure_ascii=False, indent=2)
        print()
        return 0
    hits = result["hits"]["hits"]
    print(f"{result['hits']['total']['value']} articles match; showing {len(hits)}\n")
    for hit in hits:
        print(render_article(hit) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    cfg = PipelineConfig.from_env()
    es = make_client(cfg.servers.es_url)
    if args.articles:
        return search_articles(es, cfg, args)
    install_template(es, cfg.index_prefix)  # so an empty cluster still has the mapping
    req = to_request(args)
    body = top_hashtags_body(req, args.size) if args.top_hashtags else build_query(req)
    result = es.search(index=args.index or cfg.index_pattern, ignore_unavailable=True,
                       allow_no_indices=True, **body)
    if args.json:
        json.dump(result, sys.stdout, ensure_ascii=False, indent=2)
        print()
    elif args.top_hashtags:
        aggs = result.get("aggregations", {})
        print(render_buckets("generated hashtags", aggs.get("generated", {})))
        print(render_buckets("user hashtags", aggs.get("user", {})))
    else:
        print_hits(result, "ark" if args.ark else "ptb")
    return 0


if __name__ == "__main__":
    sys.exit(main())
