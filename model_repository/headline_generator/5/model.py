"""Triton Python-backend entry point for the full headline generator.

Model code lives in training/headline/ (on the server's PYTHONPATH); this file adapts Triton
requests to `HeadlineService`. Requests the dynamic batcher hands over together are
generated in one call, grouped by language.
"""

import json

from training.headline.serving import HeadlineService
from training.triton_io import int_input, setup_instance, string_input, string_responses


class TritonPythonModel:
    def initialize(self, args):
        params, version_dir = setup_instance(args)  # threads, GPU if any
        self.service = HeadlineService(version_dir, beam=int(params.get("beam", "4")),
                                       n_best=int(params.get("n_best", "3")))

    def execute(self, requests):
        articles, langs, counts, sizes = [], [], [], []
        for request in requests:
            batch = string_input(request, "ARTICLE")
            articles += batch
            langs += string_input(request, "LANG")
            counts += int_input(request, "CANDIDATES", default=0)
            sizes.append(len(batch))
        results = self.service.generate(articles, langs, counts)
        rows = [json.dumps(r, ensure_ascii=False) for r in results]
        return string_responses(rows, sizes, "HEADLINES_JSON")

    def finalize(self):
        self.service = None
