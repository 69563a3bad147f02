// The official TypeScript SDK v2 client (@modelcontextprotocol/client 2.4.0) through a gateway, as an application
// would use it: every page of tools/list, a call with structured content, a call with progress, a call abandoned by
// timeout whose write must not land, and a binary resource, against witness_server.py behind the gateway.
//
// usage: node tests/peers/gateway/ts_drive.mjs URL MODE        (MODE: auto or legacy; after tests/peers/setup.sh)
// prints one JSON line per step: {"mode", "step", "ok", "detail"}
import { readFile } from 'node:fs/promises';

const modules = new URL('../node/node_modules/', import.meta.url);

async function load(name) {
  const folder = new URL(`${name}/`, modules);
  const manifest = JSON.parse(await readFile(new URL('package.json', folder), 'utf8'));
  let entry = manifest.exports['.'].import;
  if (typeof entry === 'object') entry = entry.default;
  return import(new URL(entry, folder).href);
}

const { Client, StreamableHTTPClientTransport } = await load('@modelcontextprotocol/client');
const [url, mode] = process.argv.slice(2);
const BLOB = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0xfe, 0x80, 0xc3, 0x28]).toString('base64');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function say(step, ok, detail) {
  process.stdout.write(`${JSON.stringify({ mode, step, ok, detail: String(detail ?? '').slice(0, 300) })}\n`);
}

async function step(name, work) {
  try {
    const [ok, detail] = await work();
    say(name, ok, detail);
  } catch (error) {
    say(name, false, error?.message ?? error);
  }
}

const client = new Client({ name: 'gateway-ts-drive', version: '1.0.0' }, { versionNegotiation: { mode } });
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)), { timeout: 15000 });
  say('connect', true, client.getProtocolVersion?.() ?? '');
} catch (error) {
  say('connect', false, error?.message ?? error);
  process.exit(0);
}
await step('tools/list pages', async () => {
  const names = [];
  let cursor;
  for (let page = 0; page < 20; page++) {
    const listed = await client.listTools(cursor ? { cursor } : {});
    names.push(...listed.tools.map((tool) => tool.name));
    cursor = listed.nextCursor;
    if (!cursor) break;
  }
  return [names.includes('witness') && names.includes('add'), names.join(',')];
});
await step('tools/call structured', async () => {
  const result = await client.callTool({ name: 'add', arguments: { a: 40, b: 2 } });
  return [result.structuredContent?.result === 42, JSON.stringify(result.structuredContent)];
});
await step('tools/call progress', async () => {
  const seen = [];
  await client.callTool({ name: 'progress_tool', arguments: { steps: 3 } }, { onprogress: (p) => seen.push(p.progress) });
  return [seen.join(',') === '1,2,3', seen.join(',')];
});
await step('tools/call cancelled', async () => {
  const tag = `ts-${Math.random().toString(16).slice(2, 10)}`;
  try {
    await client.callTool({ name: 'slow_write', arguments: { tag, delay_ms: 1200 } }, { timeout: 200 });
    return [false, 'the call returned before its timeout'];
  } catch {
    // the timeout is the point
  }
  await sleep(2000);
  const written = await client.callTool({ name: 'get_writes', arguments: {} });
  const landed = (written.structuredContent?.result ?? []).includes(tag);
  return [!landed, `write landed: ${landed}`];
});
await step('resources/read blob', async () => {
  const read = await client.readResource({ uri: 'blob://raw' });
  return [read.contents[0]?.blob === BLOB, read.contents[0]?.blob];
});
await client.close();
