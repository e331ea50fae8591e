"""The Triton Python-backend models (initialize / execute / finalize) of the four served
models, and the request/response helpers they share. Importable only inside tritonserver,
where `triton_python_backend_utils` exists.

Each version directory of model_repository/ holds a three-line `model.py` that puts the
version's own copy of this package (`nlp_models.zip`, bundled by `python -m training
publish`) first on sys.path and names one class below as `TritonPythonModel`. Requests the
dynamic batcher hands over together are processed in one call (grouped by language where
the model has one per language).
"""

import json
import os

import numpy as np
import triton_python_backend_utils as pb_utils

from nlp_models.contract import (
    ARTICLE,
    CANDIDATES,
    HASHTAGS_JSON,
    HEADLINES_JSON,
    LANG,
    PHRASE,
    STRATEGY,
    TAGS_JSON,
    TEXT,
    hashtags_to_json,
    headlines_to_json,
    tags_to_json,
)


def string_responses(rows: list[str], sizes: list[int], output: str) -> list:
    """One batched result (a string per text) -> one response per request, `sizes[i]` texts
    each, as a BYTES tensor of shape [n, 1] named `output`."""
    responses, k = [], 0
    for n in sizes:
        arr = np.array([s.encode("utf-8") for s in rows[k : k + n]], dtype=object).reshape(n, 1)
        responses.append(pb_utils.InferenceResponse([pb_utils.Tensor(output, arr)]))
        k += n
    return responses


def string_input(request, name: str, default: str | None = None) -> list[str]:
    """A request's BYTES input as strings; an absent optional input gives `default` per row
    of the request's first input (None: the input is required)."""
    tensor = pb_utils.get_input_tensor_by_name(request, name)
    if tensor is None:
        if default is None:
            raise pb_utils.TritonModelException(f"input {name} is missing")
        rows = request.inputs()[0].as_numpy().reshape(-1).shape[0]
        return [default] * rows
    return [b.decode("utf-8", errors="replace") for b in tensor.as_numpy().reshape(-1)]


def int_input(request, name: str, default: int) -> list[int]:
    """A request's optional INT32 input as ints; absent: `default` per row."""
    tensor = pb_utils.get_input_tensor_by_name(request, name)
    if tensor is None:
        return [default] * request.inputs()[0].as_numpy().reshape(-1).shape[0]
    return [int(v) for v in tensor.as_numpy().reshape(-1)]


def setup_instance(args: dict) -> tuple[dict[str, str], str]:
    """Common start of `initialize`: (the config's string parameters, this version's
    directory). Also sets torch's thread count (parameter torch_threads, default 1: the stack
    shares two cores) and makes the GPU Triton gave this instance, if any, torch's default
    device. Each instance is its own stub process, so the default device is per instance:
    the model is built on it and every tensor the decoding code creates lands there, with no
    device argument threaded through the model code. Call before building the model."""
    import torch

    config = json.loads(args["model_config"])
    params = {k: v["string_value"] for k, v in config.get("parameters", {}).items()}
    torch.set_num_threads(int(params.get("torch_threads", "1")))
    if args.get("model_instance_kind") == "GPU" and torch.cuda.is_available():
        torch.set_default_device(f"cuda:{args['model_instance_device_id']}")
    return params, os.path.join(args["model_repository"], args["model_version"])


class PosTagger:
    """pos_tagger: TEXT -> TAGS_JSON (`{"tokens": [[text, start, end, ptb, ark], ...],
    "truncated": bool}`; nlp_models/pos/serving.py). A model trained with ARK word clusters
    reads the cluster file from $NLP_POS_CLUSTERS (set by deploy/triton.py and the image)."""

    def initialize(self, args):
        from nlp_models.pos.serving import PosService

        params, version_dir = setup_instance(args)
        self.service = PosService(os.path.join(version_dir, params["checkpoint"]))

    def execute(self, requests):
        texts, sizes = [], []
        for request in requests:
            decoded = string_input(request, TEXT)
            texts += decoded
            sizes.append(len(decoded))
        out = [tags_to_json(result) for result in self.service.tag(texts)]
        return string_responses(out, sizes, TAGS_JSON)

    def finalize(self):
        self.service = None


class HashtagGenerator:
    """hashtag_generator: TEXT, LANG -> HASHTAGS_JSON (nlp_models/hashtag/serving.py)."""

    def initialize(self, args):
        from nlp_models.hashtag.serving import HashtagService

        params, version_dir = setup_instance(args)
        self.service = HashtagService(version_dir, beam=int(params.get("beam", "4")),
                                      n_best=int(params.get("n_best", "1")))

    def execute(self, requests):
        texts, langs, sizes = [], [], []
        for request in requests:
            batch_texts, batch_langs = string_input(request, TEXT), string_input(request, LANG)
            if len(batch_langs) != len(batch_texts):
                raise pb_utils.TritonModelException("TEXT and LANG must have the same length")
            texts += batch_texts
            langs += batch_langs
            sizes.append(len(batch_texts))
        out = [hashtags_to_json(r) for r in self.service.generate(texts, langs)]
        return string_responses(out, sizes, HASHTAGS_JSON)

    def finalize(self):
        self.service = None


class HeadlineGenerator:
    """headline_generator: ARTICLE, LANG, CANDIDATES? -> HEADLINES_JSON
    (nlp_models/headline/serving.py)."""

    def initialize(self, args):
        from nlp_models.headline.serving import HeadlineService

        params, version_dir = setup_instance(args)
        self.service = HeadlineService(version_dir, beam=int(params.get("beam", "4")),
                                       n_best=int(params.get("n_best", "3")))

    def execute(self, requests):
        articles, langs, counts, sizes = [], [], [], []
        for request in requests:
            batch = string_input(request, ARTICLE)
            articles += batch
            langs += string_input(request, LANG)
            counts += int_input(request, CANDIDATES, default=0)
            sizes.append(len(batch))
        rows = self.service.generate(articles, langs, counts)
        return string_responses([headlines_to_json(r) for r in rows], sizes, HEADLINES_JSON)

    def finalize(self):
        self.service = None


class ConstrainedHeadlineGenerator:
    """constrained_headline_generator: ARTICLE, LANG, PHRASE, STRATEGY?, CANDIDATES? ->
    HEADLINES_JSON (STRATEGY absent or empty: the model's default order)."""

    def initialize(self, args):
        from nlp_models.headline.serving import ConstrainedHeadlineService

        params, version_dir = setup_instance(args)
        self.service = ConstrainedHeadlineService(version_dir, beam=int(params.get("beam", "3")),
                                                  n_best=int(params.get("n_best", "3")))

    def execute(self, requests):
        articles, langs, phrases, strategies, counts, sizes = [], [], [], [], [], []
        for request in requests:
            batch = string_input(request, ARTICLE)
            articles += batch
            langs += string_input(request, LANG)
            phrases += string_input(request, PHRASE)
            strategies += string_input(request, STRATEGY, default="")
            counts += int_input(request, CANDIDATES, default=0)
            sizes.append(len(batch))
        rows = self.service.generate(articles, langs, phrases, strategies, counts)
        return string_responses([headlines_to_json(r) for r in rows], sizes, HEADLINES_JSON)

    def finalize(self):
        self.service = None
