#!/usr/bin/env bash
# Set up this checkout on a fresh machine: Debian packages, a Python 3.11 venv in .venv
# with the pinned dependencies (requirements.lock), grpcurl, and the Maven-resolved jars
# (plus the ARK word-cluster file the POS tagger reads, extracted into var/ark-clusters/).
# Idempotent: a second run only checks. Usage: bash deploy/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\n==> %s\n' "$*"; }

# Debian packages the tests use (docker-compose validates docker-compose.yml offline).
missing=()
while read -r pkg; do
  [[ -z "$pkg" || "$pkg" == \#* ]] && continue
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done < deploy/ci-apt-packages.txt
if ((${#missing[@]})); then
  say "installing Debian packages: ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${missing[@]}" \
    || echo "warning: could not install ${missing[*]}; the tests that need them will be skipped"
fi

for tool in java mvn; do
  command -v "$tool" >/dev/null || { echo "error: $tool not found; install OpenJDK 17 and Maven" >&2; exit 1; }
done

PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null || PYTHON=python3
"$PYTHON" -c 'import sys; assert sys.version_info[:2] == (3, 11), sys.version' \
  || { echo "error: Python 3.11 is required (set PYTHON=/path/to/python3.11)" >&2; exit 1; }

if [[ ! -x .venv/bin/python ]]; then
  say "creating .venv"
  "$PYTHON" -m venv .venv
fi
say "installing Python dependencies (torch is large: the first run downloads ~3 GB)"
.venv/bin/pip install -q --upgrade pip
.venv/bin/pip install -q -c requirements.lock -e '.[models,dev]'

# grpcurl: a gRPC client nobody here wrote, used by a test to prove the headline API works
# from outside Python (through server reflection). Built from the Go module proxy.
GRPCURL_VERSION=v1.9.3
if [[ ! -x .venv/bin/grpcurl ]]; then
  if command -v go >/dev/null; then
    say "building grpcurl $GRPCURL_VERSION with Go (about 3 minutes, once)"
    GOBIN="$PWD/.venv/bin" go install "github.com/fullstorydev/grpcurl/cmd/grpcurl@$GRPCURL_VERSION" \
      || echo "warning: could not build grpcurl; the test that uses it will be skipped"
  else
    echo "warning: Go not found; the grpcurl test will be skipped"
  fi
fi

say "resolving the Kafka and Elasticsearch jars and the ARK word clusters (POS tagger) with Maven"
.venv/bin/python -m deploy.local prepare

say "setup done"
