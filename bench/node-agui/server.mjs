// Benchmark contender: AG-UI's own server side. A node:http server answers
// POST /api/agui ("count to N" in the last user message) with RUN_STARTED,
// TEXT_MESSAGE_START, N× TEXT_MESSAGE_CONTENT ("1 ", "2 ", …),
// TEXT_MESSAGE_END and RUN_FINISHED, each encoded with @ag-ui/encoder's
// EventEncoder (negotiated from the Accept header) and written with
// res.write, the way the AG-UI docs show.
//
// Usage: PORT=8083 node server.mjs   (HOST defaults to 127.0.0.1)
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { EventEncoder } from '@ag-ui/encoder';
import { EventType } from '@ag-ui/core';

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 8083);

// textOf returns the text of an AG-UI message's content (a string, or an
// array of input parts).
function textOf(content) {
  if (typeof content === 'string') return content;
  return (content ?? []).filter((p) => p.type === 'text').map((p) => p.text).join('');
}

// countFrom finds N in "count to N" in the last user message.
function countFrom(messages) {
  const last = [...(messages ?? [])].reverse().find((m) => m.role === 'user');
  const m = /count to (\d+)/i.exec(textOf(last?.content));
  const n = m ? Number(m[1]) : 0;
  return n >= 1 && n <= 100000 ? n : 0;
}

async function readJSON(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

const server = http.createServer(async (req, res) => {
  if (req.method !== 'POST' || req.url !== '/api/agui') {
    res.writeHead(404).end();
    return;
  }
  let input;
  try {
    input = await readJSON(req);
  } catch (err) {
    res.writeHead(400).end(String(err));
    return;
  }
  const n = countFrom(input.messages);
  if (!n) {
    res.writeHead(400).end('this server only answers "count to N"');
    return;
  }
  const encoder = new EventEncoder({ accept: req.headers.accept });
  res.writeHead(200, {
    'Content-Type': encoder.getContentType(),
    'Cache-Control': 'no-cache',
    Connection: 'keep-alive',
  });
  const { threadId, runId } = input;
  const messageId = randomUUID();
  res.write(encoder.encode({ type: EventType.RUN_STARTED, threadId, runId }));
  res.write(encoder.encode({ type: EventType.TEXT_MESSAGE_START, messageId, role: 'assistant' }));
  for (let i = 1; i <= n; i++) {
    res.write(encoder.encode({ type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta: `${i} ` }));
  }
  res.write(encoder.encode({ type: EventType.TEXT_MESSAGE_END, messageId }));
  res.write(encoder.encode({ type: EventType.RUN_FINISHED, threadId, runId }));
  res.end();
});

server.listen(port, host, () => {
  console.log(`node-agui listening on http://${host}:${port}`);
});
