#!/usr/bin/env bash
# Install the Node peers the end-to-end tests use into tests/peers/node/ (ignored by git):
# the TypeScript SDK v2 server and client, server-everything (2025-11-25 only), and Node 22
# for the official conformance framework. Idempotent; needs only the npm registry.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p node
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
