// Drives audioc-server through the official OpenAI Node SDK, as its users
// do. Reads {base, apiKey, calls: [{kind, ...}]} as JSON on stdin and
// writes one JSON result per call: {ok: true, value} or
// {ok: false, error: {class, status, message}}.
'use strict';
const fs = require('fs');
const OpenAI = require('openai');
const { toFile } = require('openai');

async function upload(call) {
  if (call.upload === 'buffer') return toFile(fs.readFileSync(call.file), call.filename || 'audio.wav');
  return fs.createReadStream(call.file);   // the SDK's documented way: sent chunked
}

async function run(client, call) {
  switch (call.kind) {
    case 'transcribe': {
      const params = { ...call.params, file: await upload(call) };
      const res = await client.audio.transcriptions.create(params);
      if (!params.stream) return res;
      const events = [];
      for await (const ev of res) events.push(ev);
      return events;
    }
    case 'speech': {
      // the audio as base64; with stream_format 'sse' the SDK hands back the
      // raw event stream, returned as text
      const res = await client.audio.speech.create(call.params);
      if (call.params.stream_format === 'sse') return { type: res.headers.get('content-type'), text: await res.text() };
      const bytes = Buffer.from(await res.arrayBuffer());
      return { type: res.headers.get('content-type'), base64: bytes.toString('base64') };
    }
    case 'models.list': {
      const ids = [];
      for await (const m of client.models.list()) ids.push(m);
      return ids;
    }
    case 'models.retrieve':
      return client.models.retrieve(call.id);
    default:
      throw new Error('unknown call ' + call.kind);
  }
}

async function main() {
  const spec = JSON.parse(fs.readFileSync(0, 'utf8'));
  const out = [];
  for (const call of spec.calls) {
    const client = new OpenAI({ baseURL: spec.base, apiKey: call.apiKey || spec.apiKey, maxRetries: 0,
                                timeout: spec.timeoutMs || 120000 });
    try {
      out.push({ ok: true, value: await run(client, call) });
    } catch (e) {
      out.push({ ok: false, error: { class: e.constructor.name, status: e.status ?? null,
                                     message: String(e.message) } });
    }
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((e) => { console.error(e); process.exit(1); });
