"""Triton Python-backend entry point for the POS tagger.

All model code lives in training/pos/ (imported from the repository root, which the
server's PYTHONPATH must contain); this file only adapts Triton requests to
`PosPredictor`. Each request may carry several texts; requests that the dynamic batcher
hands over together are tagged in one call so the model sees one large batch.

A model trained with ARK word clusters reads the cluster file from $NLP_POS_CLUSTERS, which
`python -m deploy.local up triton` sets to the artifact it resolved from Maven Central
(deploy/clusters.py); loading fails with a message naming the missing file otherwise.
"""

import json
import os

from training.pos.predictor import PosPredictor
from training.triton_io import setup_instance, string_input, string_responses

MAX_TEXT_CHARS = 20_000  # longer inputs are cut before tokenizing (flagged `truncated`)


class TritonPythonModel:
    def initialize(self, args):
        params, version_dir = setup_instance(args)  # threads, GPU if any
        self.predictor = PosPredictor(os.path.join(version_dir, params["checkpoint"]))

    def execute(self, requests):
        texts, sizes = [], []
        for request in requests:
            decoded = string_input(request, "TEXT")
            texts += decoded
            sizes.append(len(decoded))
        cut = [t[:MAX_TEXT_CHARS] for t in texts]
        tagged = self.predictor.tag_texts(cut)
        out = []
        for text, short, result in zip(texts, cut, tagged, strict=True):
            tokens = [[t.text, t.start, t.end, t.tags.get("ptb", ""), t.tags.get("ark", "")]
                      for t in result.tokens]
            truncated = result.truncated or len(short) < len(text)
            out.append(json.dumps({"tokens": tokens, "truncated": truncated}, ensure_ascii=False))
        return string_responses(out, sizes, "TAGS_JSON")

    def finalize(self):
        self.predictor = None
