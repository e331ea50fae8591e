"""Triton Python-backend entry point for the phrase-constrained headline generator.

Model code lives in training/headline/ (on the server's PYTHONPATH); this file adapts Triton
requests to `ConstrainedHeadlineService`. STRATEGY is optional (absent = the default order).
"""

import json

from training.headline.serving import ConstrainedHeadlineService
from training.triton_io import int_input, setup_instance, string_input, string_responses


class TritonPythonModel:
    def initialize(self, args):
        params, version_dir = setup_instance(args)  # threads, GPU if any
        self.service = ConstrainedHeadlineService(version_dir, beam=int(params.get("beam", "3")),
                                                  n_best=int(params.get("n_best", "3")))

    def execute(self, requests):
        articles, langs, phrases, strategies, counts, sizes = [], [], [], [], [], []
        for request in requests:
            batch = string_input(request, "ARTICLE")
            articles += batch
            langs += string_input(request, "LANG")
            phrases += string_input(request, "PHRASE")
            strategies += string_input(request, "STRATEGY", default="")
            counts += int_input(request, "CANDIDATES", default=0)
            sizes.append(len(batch))
        rows = self.service.generate(articles, langs, phrases, strategies, counts)
        out = [json.dumps(r, ensure_ascii=False) for r in rows]
        return string_responses(out, sizes, "HEADLINES_JSON")

    def finalize(self):
        self.service = None
