#!/usr/bin/env sh
# Regenerates requirements.lock (exact versions with sha256 hashes, for Python 3.11 on any
# platform) from pyproject.toml's runtime dependencies, the `bot` extra when pyproject.toml has
# one, and deploy/requirements.in. The Dockerfile installs only what the lock lists.
# Needs uv (`python3 -m pip install uv`); run from anywhere: sh deploy/lock.sh
set -eu
cd "$(dirname "$0")/.."
extras=""
if grep -Eq '^bot *= *\[' pyproject.toml; then extras="--extra bot"; fi
# shellcheck disable=SC2086
uv pip compile pyproject.toml deploy/requirements.in $extras \
  --universal --python-version 3.11 --generate-hashes --quiet \
  --custom-compile-command "sh deploy/lock.sh" -o requirements.lock
echo "wrote requirements.lock"
