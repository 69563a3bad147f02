// The TypeScript SDK v2 peer for the error-channel and Mcp-Param probes (issue 4): a tool whose
// parameters are mirrored into Mcp-Param-* headers (x-mcp-header through zod .meta()) with a strict
// schema (.strict() puts additionalProperties: false on the wire), and a tool that always fails.
//
// usage: node tests/peers/ts_param_server.mjs PORT      (after `bash tests/peers/setup.sh`)
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
  const server = new McpServer({ name: 'assay-ts-param-peer', version: '2.4.0-test' });
  server.registerTool(
    'lookup',
    {
      description: 'Look entries up in one region.',
      inputSchema: z
        .object({
          region: z.string().meta({ 'x-mcp-header': 'Region' }),
          limit: z.number().int().optional().meta({ 'x-mcp-header': 'Limit' }),
        })
        .strict(),
    },
    async ({ region, limit }) => ({ content: [{ type: 'text', text: `${limit ?? 10} entries in ${region}` }] }),
  );
  server.registerTool(
    'explode',
    { description: 'Always fails.', inputSchema: z.object({}) },
    async () => {
      throw new Error('explode failed');
    },
  );
  return server;
}

const handler = createMcpHandler(build);

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

const port = Number(process.argv[2] || 8302);
http
  .createServer((req, res) => {
    serve(req, res).catch((error) => {
      console.error(error);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  })
  .listen(port, '127.0.0.1', () => console.error(`ts param peer listening on 127.0.0.1:${port}`));
