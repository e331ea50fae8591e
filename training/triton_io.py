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
    import json
    import os

    import torch

    config = json.loads(args["model_config"])
    params = {k: v["string_value"] for k, v in config.get("parameters", {}).items()}
    torch.set_num_threads(int(params.get("torch_threads", "1")))
    if args.get("model_instance_kind") == "GPU" and torch.cuda.is_available():
        torch.set_default_device(f"cuda:{args['model_instance_device_id']}")
    return params, os.path.join(args["model_repository"], args["model_version"])
