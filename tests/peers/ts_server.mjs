// A small MCP server on the official TypeScript SDK v2 (@modelcontextprotocol/server 2.4.0), used as
// a second real implementation in the end-to-end tests. It serves 2026-07-28 (and the SDK's stateless
// 2025-11-25 fallback) on /mcp over plain node:http: one tool, one resource, one prompt.
//
// usage: node tests/peers/ts_server.mjs PORT      (after `bash tests/peers/setup.sh`)
//
// The packages live in tests/peers/node/node_modules (not next to this file), so they are loaded by
// file URL from their package.json "exports" instead of by bare name.
import http from 'node:http';
import { readFile } from 'node:fs/promises';

const modules = new URL('./node/node_modules/', import.meta.url);

async function load(name) {
  const folder = new URL(`${name}/`, modules);
  const manifest = JSON.parse(await readFile(new URL('package.json', folder), 'utf8'));
  let entry = manifest.exports['.'].import;
  if (typeof entry === 'object') entry = entry.default;
  return import(new URL(entry, folder).href);
}

const { McpServer, createMcpHandler } = await load('@modelcontextprotocol/server');
const { z } = await load('zod');

function build() {
  const server = new McpServer({ name: 'assay-ts-peer', version: '2.4.0-test' });
  server.registerTool(
    'add',
    { description: 'Add two integers.', inputSchema: z.object({ a: z.number().int(), b: z.number().int() }) },
    async ({ a, b }) => ({ content: [{ type: 'text', text: `${a + b}` }] }),
  );
  server.registerResource(
    'readme',
    'info://readme',
    { mimeType: 'text/plain', description: 'A fixed text.' },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'served by the TS SDK v2' }] }),
  );
  server.registerPrompt(
    'shorten',
    { description: 'Ask for a shorter text.', argsSchema: z.object({ text: z.string() }) },
    ({ text }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Make this shorter: ${text}` } }] }),
  );
  return server;
}

const handler = createMcpHandler(build);

// node:http request -> fetch Request -> SDK handler -> fetch Response streamed back chunk by chunk
async function serve(req, res) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const body = chunks.length && !['GET', 'HEAD'].includes(req.method) ? Buffer.concat(chunks) : undefined;
  const abort = new AbortController();
  res.on('close', () => abort.abort());
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  const request = new Request(`http://${req.headers.host}${req.url}`, {
    method: req.method,
    headers,
    body,
    signal: abort.signal,
  });
  const response = await handler.fetch(request);
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body) {
    for await (const chunk of response.body) res.write(chunk);
  }
  res.end();
}

const port = Number(process.argv[2] || 8301);
http
  .createServer((req, res) => {
    serve(req, res).catch((error) => {
      console.error(error);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  })
  .listen(port, '127.0.0.1', () => console.error(`ts peer listening on 127.0.0.1:${port}`));
