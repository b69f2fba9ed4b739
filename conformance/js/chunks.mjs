// Checks encoder output the demo model cannot produce (written by the Go
// driver from scripted agent events) with the AI SDK's own parts: every
// chunk must pass uiMessageChunkSchema, and readUIMessageStream must
// rebuild the message without reporting an error.
//
//   node chunks.mjs <streams.json>    [{name, stream, parts}]
//
// parts is what the rebuilt message must hold: "<type>" or
// "<type>:<state>" per part, in order.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { readUIMessageStream, uiMessageChunkSchema } from 'ai';

const cases = JSON.parse(readFileSync(process.argv[2], 'utf8'));
let failed = 0;
for (const { name, stream, parts } of cases) {
  try {
    const chunks = [];
    for (const frame of stream.split('\n\n')) {
      if (frame === '' || frame === 'data: [DONE]') continue;
      const data = frame.slice('data: '.length);
      const result = await uiMessageChunkSchema().validate(JSON.parse(data));
      if (!result.success) throw new Error(`uiMessageChunkSchema rejects ${data}: ${result.error}`);
      chunks.push(result.value);
    }
    const errors = [];
    let message;
    const source = new ReadableStream({ start(c) { chunks.forEach((ch) => c.enqueue(ch)); c.close(); } });
    for await (const m of readUIMessageStream({ stream: source, onError: (e) => errors.push(String(e)) })) message = m;
    assert.deepEqual(errors, [], 'readUIMessageStream errors');
    const got = (message?.parts ?? []).map((p) => (p.state && p.type !== 'text' && p.type !== 'reasoning' ? `${p.type}:${p.state}` : p.type));
    assert.deepEqual(got, parts);
    console.log(`ok ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e?.message ?? e}`);
  }
}
process.exit(failed ? 1 : 0);
