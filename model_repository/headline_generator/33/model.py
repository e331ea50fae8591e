"""Triton entry point of headline_generator: this version's own serving code first."""

import sys
from pathlib import Path

# nlp_models.zip: the serving package this version was published with (training/repository.py)
sys.path.insert(0, str(Path(__file__).with_name("nlp_models.zip")))

from nlp_models.triton_backend import HeadlineGenerator as TritonPythonModel  # noqa: E402, F401
