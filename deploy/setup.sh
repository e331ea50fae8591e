#!/usr/bin/env bash
# Set up this checkout on a fresh machine: Debian packages, a Python 3.11 venv in .venv
# with the pinned dependencies (requirements.lock), and the Maven-resolved server jars.
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
.venv/bin/pip install -q -c requirements.lock -e '.[dev]'

say "resolving Kafka and Elasticsearch jars with Maven"
.venv/bin/python -m deploy.local prepare

say "setup done"
