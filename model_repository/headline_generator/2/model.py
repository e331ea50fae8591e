"""Triton Python-backend entry point for the full headline generator.

Model code lives in training/headline/ (on the server's PYTHONPATH); this file adapts Triton
requests to `HeadlineService`. Requests the dynamic batcher hands over together are
generated in one call, grouped by language.
"""

import json
import os

import torch

from training.headline.serving import HeadlineService
from training.triton_io import int_input, string_input, string_responses, use_instance_device


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        params = {k: v["string_value"] for k, v in config.get("parameters", {}).items()}
        torch.set_num_threads(int(params.get("torch_threads", "1")))
        use_instance_device(args)  # its GPU when Triton placed the instance on one
        version_dir = os.path.join(args["model_repository"], args["model_version"])
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
