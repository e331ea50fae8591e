"""The two headline models are called together, one Triton call each, for the stream and the
API alike; answers come back mapped to their article and phrase. (Recording stand-ins for the
clients: what is specified here is the arrangement; the integration tests call Triton.)"""

from __future__ import annotations

import asyncio

from nlp_models.contract import HeadlineResult
from services.headlines import CONSTRAINED, FULL, HeadlineModels, Job
from services.triton import Batch


class Recording:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    async def generate(self, articles, langs, *rest):  # type: ignore[no-untyped-def]
        self.calls.append((list(articles), list(langs), *rest))
        phrases = rest[0] if len(rest) > 3 else [""] * len(articles)
        return Batch([HeadlineResult(((f"{a}|{p}", -1.0),), "ok", "en", False, phrase=p)
                      for a, p in zip(articles, phrases, strict=True)], "m", "7")

    async def close(self) -> None:
        pass


JOBS = [Job("a0", "en", ["x", "y"]), Job("a1", "zh"), Job("a2", "en", ["z"])]


def test_one_call_per_model_with_every_article_and_every_phrase_pair() -> None:
    full, constrained = Recording(), Recording()
    answers = asyncio.run(HeadlineModels(full, constrained).run(JOBS, order="tok-b"))
    assert full.calls == [(["a0", "a1", "a2"], ["en", "zh", "en"], None, 0)]
    assert constrained.calls == [(["a0", "a0", "a2"], ["en", "en", "en"], ["x", "y", "z"],
                                  ["tok-b"] * 3, None, 0)]
    assert [(a.kind, a.job, a.phrase, a.result.candidates[0][0]) for a in answers] == [
        (FULL, 0, "", "a0|"), (FULL, 1, "", "a1|"), (FULL, 2, "", "a2|"),
        (CONSTRAINED, 0, "x", "a0|x"), (CONSTRAINED, 0, "y", "a0|y"),
        (CONSTRAINED, 2, "z", "a2|z")]
    assert {(a.model, a.version) for a in answers} == {("m", "7")}


def test_a_model_switched_off_or_not_asked_for_is_not_called() -> None:
    full, constrained = Recording(), Recording()
    answers = asyncio.run(HeadlineModels(None, constrained).run(JOBS))
    assert {a.kind for a in answers} == {CONSTRAINED} and len(constrained.calls) == 1
    assert HeadlineModels(full, constrained).calls([Job("a", "en")], full=False) == []
    assert full.calls == []
