"""Triton Python-backend entry point for the hashtag generator.

Model code lives in training/hashtag/ (imported from the repository root on the server's
PYTHONPATH); this file adapts Triton requests to `HashtagService`. Requests that the dynamic
batcher hands over together are generated in one call, grouped by language.
"""

import json

import triton_python_backend_utils as pb_utils

from training.hashtag.serving import HashtagService
from training.triton_io import setup_instance, string_input, string_responses


class TritonPythonModel:
    def initialize(self, args):
        params, version_dir = setup_instance(args)  # threads, GPU if any
        self.service = HashtagService(version_dir, beam=int(params.get("beam", "4")),
                                      n_best=int(params.get("n_best", "1")))

    def execute(self, requests):
        texts, langs, sizes = [], [], []
        for request in requests:
            batch_texts, batch_langs = string_input(request, "TEXT"), string_input(request, "LANG")
            if len(batch_langs) != len(batch_texts):
                raise pb_utils.TritonModelException("TEXT and LANG must have the same length")
            texts += batch_texts
            langs += batch_langs
            sizes.append(len(batch_texts))
        out = [json.dumps(r, ensure_ascii=False) for r in self.service.generate(texts, langs)]
        return string_responses(out, sizes, "HASHTAGS_JSON")

    def finalize(self):
        self.service = None
