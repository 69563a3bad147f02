#!/usr/bin/env bash
# Install the peers the end-to-end tests use (all ignored by git). Idempotent; needs only the npm
# registry and PyPI.
#
# tests/peers/node/: the TypeScript SDK v2 server and client, server-everything (2025-11-25 only),
# and Node 22 for the official conformance framework.
# tests/peers/corpus/: the published third-party servers tests/e2e/test_corpus_e2e.py runs `mcp-assay
# run` against, pinned: the official time and git servers (Python SDK, from PyPI, in a venv of their
# own at corpus/venv, never the project's) and the filesystem and memory servers (TypeScript SDK,
# from npm, at corpus/node).
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p node
(
  cd node
  if [ ! -f package.json ]; then
    npm init -y >/dev/null
  fi
  want='@modelcontextprotocol/server@2.4.0 @modelcontextprotocol/client@2.4.0 @modelcontextprotocol/server-everything@2026.8.31 zod'
  missing=0
  for pkg in @modelcontextprotocol/server @modelcontextprotocol/client @modelcontextprotocol/server-everything zod; do
    [ -d "node_modules/$pkg" ] || missing=1
  done
  if [ "$missing" = 1 ]; then
    npm install --no-audit --no-fund --loglevel=error $want >/dev/null
  fi
  echo "node peers ready in $(pwd)/node_modules"
)

CORPUS_NPM='@modelcontextprotocol/server-filesystem@2026.8.31 @modelcontextprotocol/server-memory@2026.8.31'
CORPUS_PYPI='mcp-server-time==2026.10.19 mcp-server-git==2026.10.19'
mkdir -p corpus/node
(
  cd corpus/node
  if [ ! -f package.json ]; then
    npm init -y >/dev/null
  fi
  missing=0
  for spec in $CORPUS_NPM; do
    name=${spec%@*}
    version=${spec##*@}
    installed=$(node -p "try { require('./node_modules/$name/package.json').version } catch (e) { '' }")
    [ "$installed" = "$version" ] || missing=1
  done
  if [ "$missing" = 1 ]; then
    npm install --no-audit --no-fund --loglevel=error $CORPUS_NPM >/dev/null
  fi
  echo "corpus npm servers ready in $(pwd)/node_modules"
)
(
  cd corpus
  python=${CORPUS_PYTHON:-python3}
  if [ ! -x venv/bin/python ]; then
    "$python" -m venv venv
  fi
  if ! venv/bin/python -m pip show --quiet mcp-server-time mcp-server-git >/dev/null 2>&1 \
    || [ "$(venv/bin/python -m pip freeze 2>/dev/null | grep -c -x -F -e 'mcp-server-time==2026.10.19' -e 'mcp-server-git==2026.10.19')" != 2 ]; then
    venv/bin/python -m pip install --quiet --disable-pip-version-check $CORPUS_PYPI
  fi
  echo "corpus PyPI servers ready in $(pwd)/venv"
)

# tests/peers/intermediaries/: published MCP gateways and bridges the gateway end-to-end tests put between the
# reference client and a reference server, pinned (tests/peers/intermediaries.py has each launch recipe):
# fastmcp (PyPI, `fastmcp run URL` proxies HTTP to HTTP, and a stdio server from an mcp.json) and mcp-proxy
# (PyPI, sparfenyuk: stdio to Streamable HTTP) each in a venv of their own (their mcp pins differ), and
# supergateway, mcp-proxy (punkpeye) and mcp-remote (HTTP to stdio) from npm.
INTERMEDIARIES_NPM='supergateway@4.0.0 mcp-proxy@6.7.19 mcp-remote@0.15.1'
mkdir -p intermediaries/node
(
  cd intermediaries/node
  if [ ! -f package.json ]; then
    npm init -y >/dev/null
  fi
  missing=0
  for spec in $INTERMEDIARIES_NPM; do
    name=${spec%@*}
    version=${spec##*@}
    installed=$(node -p "try { require('./node_modules/$name/package.json').version } catch (e) { '' }")
    [ "$installed" = "$version" ] || missing=1
  done
  if [ "$missing" = 1 ]; then
    npm install --no-audit --no-fund --loglevel=error $INTERMEDIARIES_NPM >/dev/null
  fi
  echo "npm intermediaries ready in $(pwd)/node_modules"
)
(
  cd intermediaries
  python=${CORPUS_PYTHON:-python3}
  for pinned in mcp-proxy==0.13.0 fastmcp==4.1.6; do
    venv=venv-${pinned%%==*}
    if [ ! -x "$venv/bin/python" ]; then
      "$python" -m venv "$venv"
    fi
    if [ "$("$venv/bin/python" -m pip freeze 2>/dev/null | grep -c -x -F "$pinned")" != 1 ]; then
      "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$pinned"
    fi
  done
  echo "PyPI intermediaries ready in $(pwd)/venv-*"
)
