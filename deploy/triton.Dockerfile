# Triton with what our Python-backend models import: torch and the repository's
# `training` package (model code exists once, shared by training and serving).
# Build context: the repository root.
#
# The Python backend's stub runs its interpreter in isolated mode, which ignores
# PYTHONPATH; a .pth file in site-packages is what puts /opt/nlp on sys.path.
FROM nvcr.io/nvidia/tritonserver:24.10-py3

RUN pip install --no-cache-dir torch numpy
COPY training /opt/nlp/training
RUN echo /opt/nlp > "$(python3 -c 'import site; print(site.getsitepackages()[0])')/nlp.pth"
ENV OMP_NUM_THREADS=1
