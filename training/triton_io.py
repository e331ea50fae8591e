"""Shared by the Triton Python-backend entry points in model_repository/ (importable only
inside tritonserver, where `triton_python_backend_utils` exists)."""

import numpy as np
import triton_python_backend_utils as pb_utils


def string_responses(rows: list[str], sizes: list[int], output: str) -> list:
    """One batched result (a string per text) -> one response per request, `sizes[i]` texts
    each, as a BYTES tensor of shape [n, 1] named `output`."""
    responses, k = [], 0
    for n in sizes:
        arr = np.array([s.encode("utf-8") for s in rows[k : k + n]], dtype=object).reshape(n, 1)
        responses.append(pb_utils.InferenceResponse([pb_utils.Tensor(output, arr)]))
        k += n
    return responses
