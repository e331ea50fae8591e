#!/bin/sh
# `tritonserver` as the official image has it on PATH: the nvidia-pytriton wheel's binary,
# its libraries, and the Python backend (with this Python's stub) where Triton looks first.
# Same reasoning as deploy/triton.py, which runs the same binary outside containers.
set -e
WHEEL=/opt/python/lib/python3.11/site-packages/pytriton/tritonserver
export LD_LIBRARY_PATH="/usr/lib/x86_64-linux-gnu:$WHEEL/../../nvidia_pytriton.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ -e /dev/nvidiactl ]; then pinned=""; else pinned="--pinned-memory-pool-byte-size=0"; fi
exec "$WHEEL/bin/tritonserver" --backend-directory=/opt/tritonserver/backends $pinned "$@"
