"""`python -m training lead`: store the lead rule (nlp_models/headline/lead.py) in a copy of
an English generator checkpoint (full: clause or trimmed-lead spans; constrained Seq2BF: the
sentence holding the phrase). Nothing is trained; the margin and length bonus were chosen
on the in-distribution dev set and the held-out-source dev set (docs/models/headline.md,
"The lead's clauses"), or on a newsroom's held-out pairs (`--tune-on`)."""

from __future__ import annotations

import torch

from nlp_models.headline.lead import LeadRule
from training.provenance import write_derived


def set_lead(checkpoint: str, margin: float, length_bonus: float, out: str,
             spans: str = "clauses", target: int = 12, compressor: str | None = None) -> dict:
    """A copy of `checkpoint` with the lead rule (and, for "compressed" spans, the
    compressor file `compressor` stored beside it)."""
    state = torch.load(checkpoint, map_location="cpu", weights_only=False)
    extra: dict = {}
    if spans == "compressed":
        if compressor is None:
            raise SystemExit("--spans compressed needs --compressor FILE (python -m training "
                             "train compressor)")
        shipped = torch.load(compressor, map_location="cpu", weights_only=False)
        extra["compressor"] = {k: v for k, v in shipped.items() if k != "meta"}
    if state["lang"] != "en" or state["kind"] not in ("generator", "seq2bf"):
        raise SystemExit(f"{checkpoint} is a {state['lang']} {state['kind']} checkpoint; the "
                         "lead rule serves English full and Seq2BF headlines")
    if (spans == "phrase") != (state["kind"] == "seq2bf"):
        raise SystemExit(f"{spans} spans do not serve a {state['kind']} checkpoint (Seq2BF: "
                         "phrase; full: clauses, trimmed or compressed)")
    rule = LeadRule(margin, length_bonus, spans, target)
    path = write_derived(checkpoint, out, state, {"lead": rule.to_state(), **extra},
                         lead=rule.to_state(), **({"compressor": compressor} if compressor else {}))
    return {"checkpoint": str(path), "lead": rule.to_state()}


def tune_and_set(checkpoint: str, data: str, out: str) -> dict:
    """The lead rule chosen on `data` (lead_tune.py), stored as `set_lead` does (no rule:
    the checkpoint's removed)."""
    from nlp_models.headline.predictor import HeadlinePredictor
    from training.headline.data import read_pairs
    from training.headline.lead_tune import tune_lead

    predictor = HeadlinePredictor.load(checkpoint, threads=2)
    if predictor.lang != "en" or predictor.kind not in ("generator", "seq2bf"):
        raise SystemExit(f"{checkpoint} is not an English full or Seq2BF generator")
    tuned = tune_lead(predictor, read_pairs(data))
    state = torch.load(checkpoint, map_location="cpu", weights_only=False)
    state["meta"].pop("lead", None)
    meta = {"lead": tuned["best"]} if tuned["best"] else {}
    path = write_derived(checkpoint, out, state, meta, lead=tuned["best"], tuned_on=data,
                         rougeL=tuned["rougeL"], without_rule=tuned["off"])
    return {"checkpoint": str(path), **{k: v for k, v in tuned.items() if k != "grid"}}
