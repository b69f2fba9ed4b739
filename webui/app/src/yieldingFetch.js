import { noteScope } from './api.js';

// yieldingFetch is fetch for the client libraries' streams (useChat's
// transport, AG-UI's HttpAgent). A reply that arrives faster than the
// page digests it (10,000 deltas in one burst) would otherwise be parsed
// in one uninterrupted run of microtasks, freezing the tab for seconds.
// Two things keep the page responsive:
//
//   - Deltas that arrived together are joined: consecutive text,
//     reasoning and tool-input deltas of one part become one event, so a
//     library handles one event where it would have handled hundreds
//     (its cost is per event: each is parsed, validated and, in AG-UI,
//     copies the whole thread). Nothing is held back to be joined: only
//     what is already here.
//   - The stream is handed on in pieces of at most PIECE bytes, with a
//     task of the ordinary kind before each, so the browser paints and
//     handles keystrokes between them. A slow stream is not delayed: a
//     piece waits one macrotask (well under a millisecond).
const PIECE = 4096;

// NO_BODY are the statuses whose response has no body (a Response with
// one of them and a body cannot be made). Chromium gives such a response
// an empty body stream anyway, so res.body alone does not tell.
const NO_BODY = new Set([101, 103, 204, 205, 304]);

// yieldTask waits for a task of the ordinary kind, so timers and input
// get their turn too. (scheduler.yield() would resume ahead of them.)
function yieldTask() {
  return new Promise((resolve) => {
    const { port1, port2 } = new MessageChannel();
    port1.onmessage = () => resolve();
    port2.postMessage(null);
  });
}

export async function yieldingFetch(input, init) {
  const res = noteScope(await fetch(input, init));
  if (!res.body || NO_BODY.has(res.status)) return res;
  let body = res.body;
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) body = body.pipeThrough(joinDeltas());
  const pieces = new TransformStream({
    async transform(chunk, controller) {
      for (let i = 0; i < chunk.length; i += PIECE) {
        await yieldTask();
        controller.enqueue(chunk.subarray(i, i + PIECE));
      }
    },
  });
  return new Response(body.pipeThrough(pieces), { status: res.status, statusText: res.statusText, headers: res.headers });
}

// DELTAS names, for each event type whose consecutive events may be
// joined, the field that says which part it belongs to and the field
// that holds its delta: AG-UI's and the UI message stream's.
const DELTAS = {
  TEXT_MESSAGE_CONTENT: ['messageId', 'delta'],
  REASONING_MESSAGE_CONTENT: ['messageId', 'delta'],
  TOOL_CALL_ARGS: ['toolCallId', 'delta'],
  'text-delta': ['id', 'delta'],
  'reasoning-delta': ['id', 'delta'],
  'tool-input-delta': ['toolCallId', 'inputTextDelta'],
};
const MAYBE_DELTA = /"type":"(TEXT_MESSAGE_CONTENT|REASONING_MESSAGE_CONTENT|TOOL_CALL_ARGS|text-delta|reasoning-delta|tool-input-delta)"/;

// joinDeltas joins consecutive delta events of one part among the events
// that arrived together (SSE events are separated by a blank line; an
// event is "id: …" and one "data: …" line, as agentui writes them). The
// joined event keeps the first one's fields and the last one's id, so a
// reconnect with Last-Event-ID starts after all of it. Anything else
// passes through as it came.
export function joinDeltas() {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let rest = ''; // an event not yet complete
  return new TransformStream({
    transform(chunk, controller) {
      const text = rest + decoder.decode(chunk, { stream: true });
      const end = text.lastIndexOf('\n\n');
      if (end < 0) {
        rest = text;
        return;
      }
      rest = text.slice(end + 2);
      controller.enqueue(encoder.encode(join(text.slice(0, end + 2))));
    },
    flush(controller) {
      const tail = rest + decoder.decode();
      if (tail) controller.enqueue(encoder.encode(tail));
    },
  });
}

// join joins the delta events among complete events (text ends with a
// blank line).
function join(text) {
  if (!MAYBE_DELTA.test(text)) return text;
  const out = [];
  let open = null; // {id, event, key, part, field} being joined
  const close = () => {
    if (!open) return;
    out.push((open.id !== null ? 'id: ' + open.id + '\n' : '') + 'data: ' + JSON.stringify(open.event) + '\n\n');
    open = null;
  };
  for (const block of text.split('\n\n')) {
    if (!block) continue;
    const d = delta(block);
    if (d && open && open.key === d.key && open.part === d.part) {
      open.event[open.field] += d.event[d.field];
      open.id = d.id;
      continue;
    }
    close();
    if (d) open = d;
    else out.push(block + '\n\n');
  }
  close();
  return out.join('');
}

// delta reads an event block that is a joinable delta, or is null.
function delta(block) {
  let id = null;
  let data = block;
  if (block.startsWith('id: ')) {
    const nl = block.indexOf('\n');
    if (nl < 0) return null;
    id = block.slice(4, nl);
    data = block.slice(nl + 1);
  }
  if (!data.startsWith('data: ') || data.includes('\n') || !MAYBE_DELTA.test(data)) return null;
  let event;
  try {
    event = JSON.parse(data.slice(6));
  } catch {
    return null;
  }
  const spec = DELTAS[event?.type];
  if (!spec || typeof event[spec[0]] !== 'string' || typeof event[spec[1]] !== 'string') return null;
  return { id, event, key: event.type, part: event[spec[0]], field: spec[1] };
}
