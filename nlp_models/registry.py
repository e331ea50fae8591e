"""The served models, one entry each: every name the rest of the code uses for a model.

Services (defaults of which Triton model to call), training (the gate, the size budget, the
serving files evaluation reads, what `publish` accepts, the model.py of a first version) and
the tests of the model repository read these entries instead of writing the names again.
Standard library only, like contract.py: the services import it without torch.

Adding a model: its package (serving code under nlp_models/, training code with its gate
under training/), an entry here, and model_repository/<name>/config.pbtxt; then
`python -m training publish <name> CKPT` writes its first version
(tests/unit/test_registry.py adds a fifth model that way).
"""

from __future__ import annotations

from dataclasses import dataclass

from nlp_models import contract


@dataclass(frozen=True)
class ServedModel:
    """One Triton model."""

    name: str  # Triton's model name and its directory model_repository/<name>/
    adapter: str  # "module:Class" that a version's model.py runs as Triton's TritonPythonModel
    gate: str  # "module:NAME" of its training.gate.ModelGate (how `publish` judges a file)
    answer: str  # its output tensor (contract.py): one JSON string per input row
    files: tuple[str, ...]  # the weights files a version directory may hold
    max_mb: int  # the budget of one weights file; `publish` refuses a larger one

    def model_py(self) -> str:
        """The model.py of a version directory: the version's own serving code first
        (nlp_models.zip, written by `publish`), then the adapter."""
        module, cls = self.adapter.split(":")
        return (f'''"""Triton entry point of {self.name}: this version's own serving code first."""

import sys
from pathlib import Path

# nlp_models.zip: the serving package this version was published with (training/repository.py)
sys.path.insert(0, str(Path(__file__).with_name("nlp_models.zip")))

from {module} import {cls} as TritonPythonModel  # noqa: E402, F401
''')


ADAPTERS = "nlp_models.triton_backend"
POS = ServedModel("pos_tagger", f"{ADAPTERS}:PosTagger", "training.pos.gate:GATE",
                  contract.TAGS_JSON, ("pos_tagger.pt",), 40)
HASHTAG = ServedModel("hashtag_generator", f"{ADAPTERS}:HashtagGenerator",
                      "training.hashtag.gate:GATE", contract.HASHTAGS_JSON,
                      ("hashtag_en.pt", "hashtag_zh.pt"), 25)
HEADLINE = ServedModel("headline_generator", f"{ADAPTERS}:HeadlineGenerator",
                       "training.headline.gate:FULL", contract.HEADLINES_JSON,
                       ("headline_en.pt", "headline_zh.pt"), 35)
CONSTRAINED = ServedModel("constrained_headline_generator",
                          f"{ADAPTERS}:ConstrainedHeadlineGenerator",
                          "training.headline.gate:CONSTRAINED", contract.HEADLINES_JSON,
                          ("headline_en.pt", "headline_zh.pt"), 35)

MODELS: dict[str, ServedModel] = {m.name: m for m in (POS, HASHTAG, HEADLINE, CONSTRAINED)}
