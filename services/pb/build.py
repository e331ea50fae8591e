"""Regenerate the protobuf Python modules in services/pb/ from proto/*.proto.

    python -m services.pb.build

The generated files are committed (so a checkout runs without a build step) and
tests/unit/test_proto.py fails when they are stale. protoc writes absolute imports
(`import messages_pb2`) for files that import each other; they are rewritten to
package-relative imports so `services.pb` works as a normal package.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parents[2]
PROTO_DIR = ROOT / "proto"
OUT_DIR = Path(__file__).resolve().parent


def build(out_dir: Path = OUT_DIR) -> list[Path]:
    protos = sorted(PROTO_DIR.glob("*.proto"))
    include = Path(protoc.__file__).parent / "_proto"  # google/protobuf/*.proto
    args = ["protoc", f"-I{PROTO_DIR}", f"-I{include}", f"--python_out={out_dir}",
            f"--pyi_out={out_dir}", f"--grpc_python_out={out_dir}", *map(str, protos)]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed; see the messages above")
    local = {p.stem for p in protos}
    written = []
    for path in sorted(out_dir.glob("*_pb2*.py*")):
        text = re.sub(
            r"^import (\w+)_pb2 as",
            lambda m: f"from . import {m.group(1)}_pb2 as" if m.group(1) in local else m.group(0),
            path.read_text(),
            flags=re.M,
        )
        path.write_text(text)
        written.append(path)
    return written


if __name__ == "__main__":
    for p in build(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT_DIR):
        print(p.relative_to(ROOT) if p.is_relative_to(ROOT) else p)
