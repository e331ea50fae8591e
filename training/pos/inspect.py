"""What the DCNN's context vectors and weight scalings do, per domain (cf. the paper's Fig. 3-4).

    python -m training inspect pos [--model CKPT]

For newswire (CoNLL-2000 test), tweets (RIT-Test, DAILY547) and chat (NPSChat test) it
prints, as JSON: the mean context distribution t_i, its mean entropy (0 = one context,
ln 7 = 1.95 = uniform), how often each context is the arg-max, and how much the scaling
vectors d (Eq. 3) vary between tokens. If t_i were the same everywhere, the hyper LSTM
would produce constant scalings and the DCNN would be a plain bi-LSTM.
"""

from __future__ import annotations

from pathlib import Path

import torch

from nlp_models.pos.features import encode_tokens
from nlp_models.pos.model import per_direction, reverse_padded
from nlp_models.pos.predictor import load_checkpoint
from training.paths import data_dir
from training.pos.data import read_conll
from training.pos.evaluate import shipped_checkpoint

DOMAINS = {
    "newswire (conll2000/test)": ("conll2000/test", "ptb"),
    "tweets (ritter/test)": ("ritter/test", "ptb"),
    "tweets (ark_daily547/test)": ("ark_daily547/test", "ark"),
    "chat (npschat/test)": ("npschat/test", "ptb"),
}


@torch.inference_mode()
def domain_stats(model, vocabs, sentences: list[list[str]]) -> dict:
    ts, dhs = [], []
    Z = model.cfg.hyper_embed
    for k in range(0, len(sentences), 64):
        chunk = sentences[k : k + 64]
        words, types, chars, lengths, clusters = encode_tokens(chunk, vocabs)
        mask = types != 0
        x = model.represent(words, types, chars, clusters)
        t = model.context(x, mask.float())
        hyper = torch.stack([model.hyper[0](t)[0], model.hyper[1](reverse_padded(t, lengths))[0]])
        z = model.to_z(hyper)
        d_h = per_direction(z[..., Z : 2 * Z], model.z_to_d[1]) + 1.0  # (2,B,T,G)
        ts.append(t[mask])
        dhs.append(d_h[0][mask])  # forward direction, real tokens
    t, d_h = torch.cat(ts), torch.cat(dhs)
    entropy = -(t * t.clamp_min(1e-12).log()).sum(-1)
    top = torch.bincount(t.argmax(-1), minlength=t.shape[1]).float() / len(t)
    return {
        "tokens": len(t),
        "mean_t": [round(v, 3) for v in t.mean(0).tolist()],
        "argmax_share": [round(v, 3) for v in top.tolist()],
        "mean_entropy": round(entropy.mean().item(), 3),
        "d_h_std_across_tokens": round(d_h.std(0).mean().item(), 4),
        "d_h_mean_abs_dev_from_1": round((d_h - 1).abs().mean().item(), 4),
    }


def inspect(model_path: str | None = None) -> dict:
    torch.set_num_threads(1)
    path = Path(model_path) if model_path else shipped_checkpoint()
    model, vocabs, _ = load_checkpoint(path)
    if model.cfg.variant != "dcnn":
        raise SystemExit(f"{path} is a {model.cfg.variant} model; inspect needs a dcnn")
    root = data_dir() / "pos"
    out = {"model": str(path)}
    for name, (rel, head) in DOMAINS.items():
        sentences = [s.tokens for s in read_conll(root / f"{rel}.conll", head)][:1000]
        out[name] = domain_stats(model, vocabs, sentences)
    return out
