// A client on the official TypeScript SDK v2 (@modelcontextprotocol/client 2.4.0), used as a real client in
// the end-to-end tests of `mcp-assay proxy --inject`: it connects to URL (the proxy) in MODE ('auto' or
// 'legacy'), then makes the ordinary calls an application would, each once, with a timeout of TIMEOUT_MS.
// A call that fails is reported and the next one is made (the SDK's own recovery is what is observed); a
// connect that fails is retried once on a new client, as an application would.
//
// usage: node tests/peers/ts_client.mjs URL MODE TIMEOUT_MS [TOKEN]      (after `bash tests/peers/setup.sh`)
// TOKEN, when given, is sent as a bearer token on every request.
// prints one JSON line per step: {"step": ..., "ok": true|false, "detail": ...}
import { readFile } from 'node:fs/promises';

const modules = new URL('./node/node_modules/', import.meta.url);

async function load(name) {
  const folder = new URL(`${name}/`, modules);
  const manifest = JSON.parse(await readFile(new URL('package.json', folder), 'utf8'));
  let entry = manifest.exports['.'].import;
  if (typeof entry === 'object') entry = entry.default;
  return import(new URL(entry, folder).href);
}

const { Client, StreamableHTTPClientTransport } = await load('@modelcontextprotocol/client');
const [url, mode, timeoutText, token] = process.argv.slice(2);
const timeout = Number(timeoutText || '1000');

function say(step, ok, detail) {
  process.stdout.write(`${JSON.stringify({ step, ok, detail: String(detail ?? '').slice(0, 300) })}\n`);
}

async function connect() {
  const client = new Client(
    { name: 'assay-ts-client', version: '2.4.0-test' },
    { versionNegotiation: { mode } },
  );
  const requestInit = token ? { headers: { authorization: `Bearer ${token}` } } : undefined;
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit });
  await client.connect(transport, { timeout });
  return client;
}

async function step(name, work) {
  try {
    say(name, true, JSON.stringify(await work()).slice(0, 200));
  } catch (error) {
    say(name, false, error?.message ?? error);
  }
}

let client;
for (let attempt = 1; attempt <= 2 && client === undefined; attempt++) {
  try {
    client = await connect();
    say('connect', true, client.getProtocolVersion?.() ?? '');
  } catch (error) {
    say('connect', false, error?.message ?? error);
  }
}
if (client !== undefined) {
  const options = { timeout };
  await step('tools/list', () => client.listTools({}, options));
  await step('tools/call add', () => client.callTool({ name: 'add', arguments: { a: 40, b: 2 } }, options));
  await step('tools/call progress', () => client.callTool({ name: 'progress_tool', arguments: { steps: 2 } }, options));
  await step('resources/read', () => client.readResource({ uri: 'greeting://ts' }, options));
  await step('prompts/get', () => client.getPrompt({ name: 'summarize', arguments: { text: 'proxies' } }, options));
  await step('tools/call add again', () => client.callTool({ name: 'add', arguments: { a: 1, b: 2 } }, options));
  await step('tools/list again', () => client.listTools({}, options));
  await client.close();
}
