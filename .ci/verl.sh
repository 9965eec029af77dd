#!/usr/bin/env bash
# verl's agent loop under its own worker (test/adapters/python/verl_test.ts), in
# a venv of its own: $WEBSERV_VERL_VENV (default ~/.cache/webserv-venv-verl),
# made from adapters/python/requirements-verl.txt with --no-deps (verl 0.9.1
# declares trainers' requirements the agent loop never imports, which would fail
# pip's resolver) whenever that file changes. torch 2.15.0 with its CUDA wheels
# from PyPI, the same pin as TRL's venv: about 6 GB, fetched once into pip's
# cache. Then the webserv package as users install it, and the test.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${WEBSERV_VERL_VENV:-$HOME/.cache/webserv-venv-verl}"
REQUIREMENTS=adapters/python/requirements-verl.txt
PYTHON="${WEBSERV_PYTHON:-python3}"

stamp="$VENV/.requirements.sha256"
want="$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  started=$SECONDS
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -r "$REQUIREMENTS"
  echo "verl venv installed in $((SECONDS - started)) s"
  echo "$want" >"$stamp"
fi
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --force-reinstall \
  ./adapters/python
rm -rf adapters/python/build adapters/python/*.egg-info
"$VENV/bin/python" -c 'import importlib.metadata as m
for name in ("verl", "torch", "ray", "transformers"):
    print(name, m.version(name))'
WEBSERV_VERL_VENV="$VENV" deno test --allow-all test/adapters/python/verl_test.ts
