// Benchmark contender: the Vercel AI SDK's own server side. A node:http
// server answers POST /api/chat ("count to N" in the last user message)
// with N text deltas written through createUIMessageStream and sent with
// createUIMessageStreamResponse, the way the AI SDK documentation shows.
// The web Response is copied onto node's response (status, headers, body
// via Readable.fromWeb) because node:http has no native Response support.
//
// It writes the same chunks agentui sends (start, start-step, text-start,
// N× text-delta, text-end, finish-step, finish, then [DONE] from the SDK),
// with UUIDs as ids, so both produce the same frames of the same size.
//
// Usage: PORT=8082 node server.mjs   (HOST defaults to 127.0.0.1)
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { createUIMessageStream, createUIMessageStreamResponse } from 'ai';

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 8082);

// countFrom finds N in "count to N" in the text of the last user message.
function countFrom(messages) {
  const last = [...(messages ?? [])].reverse().find((m) => m.role === 'user');
  const text = (last?.parts ?? []).filter((p) => p.type === 'text').map((p) => p.text).join('');
  const m = /count to (\d+)/i.exec(text);
  const n = m ? Number(m[1]) : 0;
  return n >= 1 && n <= 100000 ? n : 0;
}

async function readJSON(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

const server = http.createServer(async (req, res) => {
  if (req.method !== 'POST' || req.url !== '/api/chat') {
    res.writeHead(404).end();
    return;
  }
  let n;
  try {
    n = countFrom((await readJSON(req)).messages);
  } catch (err) {
    res.writeHead(400).end(String(err));
    return;
  }
  if (!n) {
    res.writeHead(400).end('this server only answers "count to N"');
    return;
  }
  const response = createUIMessageStreamResponse({
    stream: createUIMessageStream({
      execute({ writer }) {
        const id = randomUUID();
        writer.write({ type: 'start', messageId: randomUUID() });
        writer.write({ type: 'start-step' });
        writer.write({ type: 'text-start', id });
        for (let i = 1; i <= n; i++) {
          writer.write({ type: 'text-delta', id, delta: `${i} ` });
        }
        writer.write({ type: 'text-end', id });
        writer.write({ type: 'finish-step' });
        writer.write({ type: 'finish', finishReason: 'stop' });
      },
    }),
  });
  res.writeHead(response.status, Object.fromEntries(response.headers));
  Readable.fromWeb(response.body).pipe(res);
});

server.listen(port, host, () => {
  console.log(`node-ai listening on http://${host}:${port}`);
});
