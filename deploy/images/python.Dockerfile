# A stand-in for python:3.11-slim built from Debian's archive alone, for machines that reach
# no image registry (deploy/README.md, "Images without a registry"). DEBIAN_BASE is a Debian
# bookworm image made here (debootstrap, then `docker import`). Build context: deploy/images.
#
# Certificate authorities beyond Debian's (e.g. a TLS-inspecting proxy's, without which pip
# cannot reach PyPI) go into ca/ as *.crt files; they are trusted by apt, pip and Python.
ARG DEBIAN_BASE=nlp-debian:bookworm
FROM ${DEBIAN_BASE}

COPY ca/ /usr/local/share/ca-certificates/
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
 && update-ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && python3 -m venv /opt/python
ENV PATH=/opt/python/bin:$PATH \
    PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
