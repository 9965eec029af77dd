#!/usr/bin/env bash
# The Python test venv: the real libraries trainers use (OpenEnv's client,
# gymnasium, schemathesis, the MCP SDK, transformers, Ray, ors-sdk, pytest), pinned in
# adapters/python/requirements-test.txt and installed from PyPI into
# $WEBSERV_VENV (default ~/.cache/webserv-venv). The Python tests run inside
# `deno task test` (test/adapters/python/) and fail when this venv is missing.
# Safe to run again: it reinstalls only when the requirements changed.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${WEBSERV_VENV:-$HOME/.cache/webserv-venv}"
REQUIREMENTS=adapters/python/requirements-test.txt
PYTHON="${WEBSERV_PYTHON:-python3}"

if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' 2>/dev/null; then
  echo "Python 3.10 or newer is needed for the test venv (found: $("$PYTHON" --version 2>&1))" >&2
  exit 1
fi
if [ ! -x "$VENV/bin/python" ]; then
  if ! "$PYTHON" -m venv "$VENV" 2>/dev/null; then
    # Debian's python3 ships venv separately.
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y python3-venv
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
  fi
fi

stamp="$VENV/.requirements.sha256"
want="$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQUIREMENTS"
  echo "$want" >"$stamp"
fi
# OpenEnv's current client (openenv 0.10) is the `openenv` module too, as
# openenv-core 0.3.0 is: it gets a venv of its own, pinned in its own file.
OPENENV_VENV="${WEBSERV_OPENENV_VENV:-$HOME/.cache/webserv-venv-openenv}"
OPENENV_REQUIREMENTS=adapters/python/requirements-openenv.txt
[ -x "$OPENENV_VENV/bin/python" ] || "$PYTHON" -m venv "$OPENENV_VENV"
openenv_stamp="$OPENENV_VENV/.requirements.sha256"
openenv_want="$(sha256sum "$OPENENV_REQUIREMENTS" | cut -d' ' -f1)"
if [ "$(cat "$openenv_stamp" 2>/dev/null || true)" != "$openenv_want" ]; then
  "$OPENENV_VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$OPENENV_REQUIREMENTS"
  echo "$openenv_want" >"$openenv_stamp"
fi

# Prime Intellect's verifiers pins mcp 2.0.0 and openai 2, which the shared
# venv cannot hold beside mcp 2.3.0 and openai 3: a venv of its own too.
VERIFIERS_VENV="${WEBSERV_VERIFIERS_VENV:-$HOME/.cache/webserv-venv-verifiers}"
VERIFIERS_REQUIREMENTS=adapters/python/requirements-verifiers.txt
[ -x "$VERIFIERS_VENV/bin/python" ] || "$PYTHON" -m venv "$VERIFIERS_VENV"
verifiers_stamp="$VERIFIERS_VENV/.requirements.sha256"
verifiers_want="$(sha256sum "$VERIFIERS_REQUIREMENTS" | cut -d' ' -f1)"
if [ "$(cat "$verifiers_stamp" 2>/dev/null || true)" != "$verifiers_want" ]; then
  "$VERIFIERS_VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$VERIFIERS_REQUIREMENTS"
  echo "$verifiers_want" >"$verifiers_stamp"
fi

# The RL frameworks webserv.integrations wraps (Agent Lightning, ART, rLLM's
# model gateway): their LiteLLM and mcp pins clash with the other venvs'.
# Made afresh whenever its requirements change (the file is a full freeze, so a
# venv holding packages from an older one would not be the one CI tests).
HARNESS_VENV="${WEBSERV_HARNESS_VENV:-$HOME/.cache/webserv-venv-harnesses}"
HARNESS_REQUIREMENTS=adapters/python/requirements-harnesses.txt
harness_stamp="$HARNESS_VENV/.requirements.sha256"
harness_want="$(sha256sum "$HARNESS_REQUIREMENTS" | cut -d' ' -f1)"
if [ "$(cat "$harness_stamp" 2>/dev/null || true)" != "$harness_want" ]; then
  rm -rf "$HARNESS_VENV"
  "$PYTHON" -m venv "$HARNESS_VENV"
  "$HARNESS_VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$HARNESS_REQUIREMENTS"
  echo "$harness_want" >"$harness_stamp"
fi

# The client package, built as a wheel and installed the way users install
# it, so the Python suites import what pip installs (no source path). Rebuilt
# when its sources change.
package=adapters/python
pkg_want="$(find "$package/pyproject.toml" "$package/README.md" "$package"/*.py "$package/webserv" -type f \
  -not -path '*/__pycache__/*' -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)"
wheels=""
for venv in "$VENV" "$OPENENV_VENV" "$VERIFIERS_VENV" "$HARNESS_VENV"; do
  if [ "$(cat "$venv/.webserv-package.sha256" 2>/dev/null || true)" != "$pkg_want" ]; then
    if [ -z "$wheels" ]; then
      wheels="$(mktemp -d)"
      "$VENV/bin/python" -m pip wheel --quiet --disable-pip-version-check --no-deps -w "$wheels" "./$package"
      rm -rf "$package/build" "$package"/*.egg-info
    fi
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --force-reinstall \
      "$wheels"/openenv_webserv-*.whl
    echo "$pkg_want" >"$venv/.webserv-package.sha256"
  fi
done
[ -z "$wheels" ] || rm -rf "$wheels"
"$OPENENV_VENV/bin/python" -m pip check
"$VERIFIERS_VENV/bin/python" -m pip check
"$VENV/bin/python" -m pip check
"$HARNESS_VENV/bin/python" -m pip check
"$VENV/bin/python" -c 'import importlib.metadata as m
for name in ("openenv-core", "gymnasium", "pytest", "schemathesis", "mcp", "transformers", "ray",
             "ors-sdk", "openenv-webserv"):
    print(name, m.version(name))'
"$OPENENV_VENV/bin/python" -c 'import importlib.metadata as m; print("openenv", m.version("openenv"))'
"$VERIFIERS_VENV/bin/python" -c 'import importlib.metadata as m; print("verifiers", m.version("verifiers"))'
"$HARNESS_VENV/bin/python" -c 'import importlib.metadata as m
for name in ("agentlightning", "openpipe-art", "rllm-model-gateway"):
    print(name, m.version(name))'
