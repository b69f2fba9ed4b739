// Runs one flow of the AI SDK 7's WebSocketChatTransport against an
// agentui server: the real Chat class and transport (Node 22's
// WebSocket, with the page's scope cookie on the handshake, as a browser
// sends it). The transport itself refuses what the protocol forbids (a
// sequence gap, an invalid chunk, an unknown frame: it closes the socket
// and fails every chat on it); every server frame is also recorded and
// checked here: sequences dense from 0 per request, each chunk valid.
//
//   node websocket.mjs <base-url> <flow>
import assert from 'node:assert/strict';
import { Chat } from '@ai-sdk/react';
import { uiMessageChunkSchema, WebSocketChatTransport } from 'ai';
import { readFileSync } from 'node:fs';
import { cookieFetch, cookieHeader, history } from './cookies.mjs';

const [base, flow] = process.argv.slice(2);
const aiVersion = JSON.parse(readFileSync(new URL('../package.json', import.meta.resolve('ai')), 'utf8')).version;
const frames = []; // every server frame, parsed
const sockets = [];

// RecordingWebSocket is Node's WebSocket with the scope cookie and the
// page's origin on its handshake, recording what the server sends.
function recordingWebSocket(cookie) {
  return class extends WebSocket {
    constructor(url, protocols) {
      super(url, { protocols, headers: { cookie, origin: base } });
      sockets.push(this);
      this.addEventListener('message', (e) => frames.push(JSON.parse(e.data)));
    }
  };
}

async function newTransport() {
  return new WebSocketChatTransport({ url: base + '/api/chat', webSocket: recordingWebSocket(await cookieHeader(base)) });
}

async function newChat(transport, options = {}) {
  return new Chat({ id: `ws-${flow}-${Math.random().toString(36).slice(2)}`, transport: transport ?? (await newTransport()), ...options });
}

async function until(cond, what, ms = 10000) {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for ' + what);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const settled = (chat) => until(() => chat.status === 'ready' || chat.status === 'error', 'the chat to settle');
const assistant = (chat) => chat.messages.filter((m) => m.role === 'assistant').at(-1);
const texts = (m) => m.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
const stored = async (id) => (await cookieFetch(`${base}/api/chat/${id}`)).json();

// checkFrames checks what the server sent: per request, chunks numbered
// 0, 1, 2, … with no gap, each a valid UI message chunk, and the
// request's last frame end, no-active or error.
async function checkFrames() {
  const byRequest = Map.groupBy(frames, (f) => f.requestId);
  for (const [id, fs] of byRequest) {
    const chunks = fs.filter((f) => f.type === 'chunk');
    chunks.forEach((c, i) => assert.equal(c.sequence, i, `request ${id}: chunk ${i} numbered ${c.sequence}`));
    for (const c of chunks) {
      const result = await uiMessageChunkSchema().validate(c.chunk);
      if (!result.success) throw new Error(`uiMessageChunkSchema rejects ${JSON.stringify(c.chunk)}: ${result.error}`);
    }
    for (const f of fs) assert.ok(['start', 'chunk', 'end', 'error', 'no-active'].includes(f.type), 'a frame the transport knows: ' + f.type);
  }
}

const flows = {
  // Two turns over one socket, answered as over HTTP; the chat is stored.
  async chat() {
    const chat = await newChat();
    await chat.sendMessage({ text: 'hello' });
    await settled(chat);
    assert.equal(chat.error, undefined, String(chat.error));
    assert.equal(texts(assistant(chat)), 'You said: hello');
    await chat.sendMessage({ text: 'think: wait 10 ms' });
    await settled(chat);
    assert.equal(chat.error, undefined, String(chat.error));
    assert.deepEqual(chat.messages.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
    assert.equal(texts(assistant(chat)), 'done');
    assert.equal(sockets.length, 1, 'one socket carried both turns');
    if (history) assert.deepEqual((await stored(chat.id)).map((m) => m.id), chat.messages.map((m) => m.id), 'stored under the ids the client holds');
    return chat;
  },
  // Two chats at once on one socket: each gets its own reply.
  async multiplex() {
    const transport = await newTransport();
    const [a, b] = [await newChat(transport), await newChat(transport)];
    await Promise.all([a.sendMessage({ text: 'think: wait 300 ms' }), b.sendMessage({ text: 'hello' })]);
    await Promise.all([settled(a), settled(b)]);
    assert.equal(a.error ?? b.error, undefined, String(a.error ?? b.error));
    assert.equal(texts(assistant(a)), 'done');
    assert.equal(texts(assistant(b)), 'You said: hello');
    assert.equal(sockets.length, 1, 'one socket carried both chats');
    return a;
  },
  // stop() sends abort: the server stops the reply (with history it is
  // stored as stopped, not finished in the background), and the next
  // message is answered at once.
  async stop() {
    const chat = await newChat();
    const first = chat.sendMessage({ text: 'think: wait 5000 ms' });
    await until(() => assistant(chat)?.parts.some((p) => p.type === 'reasoning' && p.text.endsWith('ms')), 'the reasoning');
    const stoppedId = assistant(chat).id;
    await chat.stop();
    await first;
    const started = Date.now();
    await chat.sendMessage({ text: 'hello' });
    await settled(chat);
    assert.equal(chat.error, undefined, String(chat.error));
    assert.equal(texts(assistant(chat)), 'You said: hello');
    assert.ok(Date.now() - started < 4000, 'answered without waiting for the stopped reply');
    if (history) {
      const s = await stored(chat.id);
      assert.deepEqual(s.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
      assert.equal(s[1].id, stoppedId);
      assert.equal(texts(s[1]), '', 'the stopped reply was not finished in the background');
    }
    return chat;
  },
  // A reload mid-reply: the page's socket is gone; a new page loads the
  // stored chat and resumes over a new socket (resume, no lastSequence):
  // start, then the reply replayed from its first chunk, live; it shows
  // once, whole. Without history there is nothing to resume (no-active).
  async resume() {
    const first = await newChat();
    const sending = first.sendMessage({ text: 'think: wait 1500 ms' }).catch(() => {});
    await until(() => assistant(first)?.parts.some((p) => p.type === 'reasoning' && p.text.endsWith('ms')), 'the reasoning');
    sockets[0].close(); // the page goes away
    await sending;
    const messages = history ? await stored(first.id) : [];
    const chat = new Chat({ id: first.id, messages, transport: await newTransport() });
    await chat.resumeStream();
    await settled(chat);
    assert.equal(chat.error, undefined, String(chat.error));
    const resumes = frames.filter((f) => sockets.length === 2 && f.type === 'start');
    if (!history) {
      assert.equal(chat.messages.length, 0, 'nothing to resume');
      assert.ok(frames.some((f) => f.type === 'no-active'), 'no-active');
      return chat;
    }
    assert.equal(resumes.length, 1, 'the resume is confirmed with start');
    assert.deepEqual(chat.messages.map((m) => m.role), ['user', 'assistant']);
    assert.equal(texts(chat.messages[1]), 'done');
    assert.equal(chat.messages[1].parts.filter((p) => p.type === 'reasoning').length, 1, 'the reasoning shows once');
    return chat;
  },
  // interrupt travels in the frame's body too: the running reply stops,
  // as Stop does, and the message is answered at once.
  async interrupt() {
    const chat = await newChat();
    const first = chat.sendMessage({ text: 'think: wait 5000 ms' });
    await until(() => assistant(chat)?.parts.some((p) => p.type === 'reasoning' && p.text.endsWith('ms')), 'the reasoning');
    const replyId = assistant(chat).id;
    const started = Date.now();
    await chat.sendMessage({ text: 'hello' }, { body: { busy: 'interrupt' } });
    await first;
    await settled(chat);
    assert.equal(chat.error, undefined, String(chat.error));
    assert.equal(texts(assistant(chat)), 'You said: hello');
    if (!history) return chat;
    assert.ok(Date.now() - started < 4000, 'answered without waiting for the interrupted reply');
    const s = await stored(chat.id);
    assert.deepEqual(s.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
    assert.equal(s[1].id, replyId);
    assert.equal(texts(s[1]), '', 'the interrupted reply was not finished in the background');
    return chat;
  },
  // steer and queue travel in the frame's body, as over HTTP: a message
  // queued behind the reply waits, one steered into it is taken at its
  // next step boundary; once the reply ends, the queued one runs.
  async steerAndQueue() {
    const outcomes = [];
    const chat = await newChat(undefined, { onData: (d) => outcomes.push(d) });
    const first = chat.sendMessage({ text: 'think: wait 1500 ms' });
    await until(() => assistant(chat)?.parts.some((p) => p.type === 'reasoning' && p.text.endsWith('ms')), 'the reasoning');
    const queued = chat.sendMessage({ text: 'and later' }, { body: { busy: 'queue' } });
    // Over a socket the outcome is not a chunk (a resume numbers the turn
    // from its start): the queue's listing shows the message.
    const listed = async () => (await (await cookieFetch(`${base}/api/chat/${chat.id}/queue`)).json()).queued.map((q) => q.text);
    if (history) {
      const deadline = Date.now() + 5000;
      while (!(await listed()).includes('and later')) {
        if (Date.now() > deadline) throw new Error('the message was not queued');
        await new Promise((r) => setTimeout(r, 10));
      }
    }
    await chat.sendMessage({ text: 'hello' }, { body: { busy: 'steer' } });
    await Promise.all([first, queued]);
    await settled(chat);
    assert.equal(chat.error, undefined, String(chat.error));
    const answered = chat.messages.filter((m) => m.role === 'assistant').map(texts);
    assert.ok(answered.includes('You said: and later'), 'the queued message is answered: ' + JSON.stringify(answered));
    if (!history) return chat;
    assert.deepEqual(outcomes.map((o) => [o.type, o.data.outcome]), [['data-steering', 'delivered']]);
    assert.deepEqual(await listed(), [], 'nothing waits');
    const s = await stored(chat.id);
    assert.deepEqual(s.map((m) => [m.role, m.role === 'user' ? texts(m) : '']), [
      ['user', 'think: wait 1500 ms'], ['assistant', ''], ['user', 'hello'], ['assistant', ''], ['user', 'and later'], ['assistant', ''],
    ]);
    assert.deepEqual([texts(s[1]), texts(s[3]), texts(s[5])], ['done', 'You said: hello', 'You said: and later']);
    return chat;
  },
};

try {
  const chat = await flows[flow]();
  await checkFrames();
  for (const s of sockets) s.close();
  console.log(JSON.stringify({ flow, ai: aiVersion, node: process.version, messages: chat?.messages.length, frames: frames.length }));
} catch (e) {
  console.error(`flow ${flow} failed:`, e);
  console.error('frames:', JSON.stringify(frames.slice(-8)));
  process.exit(1);
}
