"""Human-readable rendering of search hits: ``Obama/NNP visits/VBZ ...``."""

from __future__ import annotations

from typing import Any


def tagged_text(source: dict[str, Any], tagset: str = "ptb") -> str:
    """The text with each token followed by its tag; untagged text falls back to plain."""
    tokens = source.get("tokens") or []
    if not tokens:
        return str(source.get("text", ""))
    return " ".join(f"{t['text']}/{t.get(tagset) or '?'}" for t in tokens)


def render_hit(hit: dict[str, Any], tagset: str = "ptb") -> str:
    src = hit["_source"]
    head = f"{src.get('id', hit['_id'])}  {src.get('created_at') or '-'}  {src.get('platform', '')}"
    if src.get("author"):
        head += f"  @{src['author']}"
    if src.get("truncated"):
        head += f"  [truncated, {src.get('original_length')} chars]"
    lines = [head, "  " + tagged_text(src, tagset)]
    user = src.get("user_hashtags") or []
    suggested = [f"#{h['text']} ({_why(h)})" for h in src.get("hashtags") or []]
    if user or suggested:
        lines.append(f"  hashtags: user {' '.join('#' + h for h in user) or '-'}; "
                     f"suggested {' '.join(suggested) or '-'}")
    return "\n".join(lines)


def _why(hashtag: dict[str, Any]) -> str:
    """Where a suggestion came from and its score: with the hashtag memory, the learned
    merge's probability that the author would write it (docs/models/hashtag.md)."""
    score = hashtag.get("score")
    return ", ".join(filter(None, [hashtag.get("source"),
                                   f"{score:.2f}" if score is not None else None])) or "-"


def render_buckets(title: str, agg: dict[str, Any]) -> str:
    buckets = agg.get("buckets", [])
    if not buckets:
        return f"{title}: (none)"
    width = max(len(str(b["key"])) for b in buckets) + 1
    rows = [f"  #{str(b['key']).ljust(width)} {b['doc_count']}" for b in buckets]
    return "\n".join([f"{title}:", *rows])


def render_article(hit: dict[str, Any]) -> str:
    """An article's title and its candidates, grouped by kind and phrase."""
    src = hit["_source"]
    head = f"{src.get('id', hit['_id'])}  {src.get('lang') or '-'}  {src.get('source') or ''}"
    if src.get("truncated"):
        head += "  [truncated]"
    lines = [head, f"  original title: {src.get('title') or '-'}"]
    groups: dict[str, list[str]] = {}
    for c in src.get("candidates") or []:
        label = "full" if c["kind"] == "full" else f"containing {c.get('phrase')!r}"
        groups.setdefault(label, []).append(f"{c['text']}  ({c['score']:.2f})")
    for label, texts in groups.items():
        lines.append(f"  {label}:")
        lines += [f"    - {t}" for t in texts]
    for issue in src.get("issues") or []:
        lines.append(f"  no {issue['kind']} candidates"
                     + (f" for {issue['phrase']!r}" if issue.get("phrase") else "")
                     + f": {issue['status']} ({issue['message']})")
    return "\n".join(lines)
