"""The served models, one entry each: every name the rest of the code uses for a model.

Services (defaults of which Triton model to call), training (the gate's size budget, the
serving files evaluation reads, what `publish` accepts) and the tests of the model
repository read these entries instead of writing the names again. Standard library only,
like contract.py: the services import it without torch.

Adding a model: its package under nlp_models/, its adapter class in triton_backend.py, an
entry here, model_repository/<name>/config.pbtxt, and its gate in training/gate.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from nlp_models import contract


@dataclass(frozen=True)
class ServedModel:
    """One Triton model."""

    name: str  # Triton's model name and its directory model_repository/<name>/
    backend: str  # the class in nlp_models/triton_backend.py a version's model.py runs
    answer: str  # its output tensor (contract.py): one JSON string per input row
    files: tuple[str, ...]  # the weights files a version directory may hold
    max_mb: int  # the budget of one weights file; `publish` refuses a larger one


POS = ServedModel("pos_tagger", "PosTagger", contract.TAGS_JSON, ("pos_tagger.pt",), 40)
HASHTAG = ServedModel("hashtag_generator", "HashtagGenerator", contract.HASHTAGS_JSON,
                      ("hashtag_en.pt", "hashtag_zh.pt"), 25)
HEADLINE = ServedModel("headline_generator", "HeadlineGenerator", contract.HEADLINES_JSON,
                       ("headline_en.pt", "headline_zh.pt"), 35)
CONSTRAINED = ServedModel("constrained_headline_generator", "ConstrainedHeadlineGenerator",
                          contract.HEADLINES_JSON, ("headline_en.pt", "headline_zh.pt"), 35)

MODELS: dict[str, ServedModel] = {m.name: m for m in (POS, HASHTAG, HEADLINE, CONSTRAINED)}
