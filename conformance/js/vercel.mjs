// Runs useChat flows against an agentui server with the real AI SDK:
// the Chat class (what useChat wraps) and DefaultChatTransport drive the
// conversation; every response is also checked chunk by chunk with the
// SDK's uiMessageChunkSchema and rebuilt with readUIMessageStream.
//
//   node vercel.mjs <base-url> <flow>[,<flow>...]
//
// The same script runs with AI SDK 6 (js/) and, through the symlink in
// js7/ under `node --preserve-symlinks`, with AI SDK 7 on Node 22. AISDK7=1
// says the server sends AI SDK 7's extra chunks.
//
// Prints each flow's outcome as a JSON line (with the ai version it ran;
// flows.mjs) and exits 0, or 1 when a flow failed.
import assert from 'node:assert/strict';
import { Chat } from '@ai-sdk/react';
import {
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
  readUIMessageStream,
  uiMessageChunkSchema,
  validateUIMessages,
} from 'ai';
import { readFileSync } from 'node:fs';
import { cookieFetch, history } from './cookies.mjs';
import { flow, runFlows } from './flows.mjs';

const [base, names] = process.argv.slice(2);
const aiVersion = JSON.parse(readFileSync(new URL('../package.json', import.meta.resolve('ai')), 'utf8')).version;
const v7Chunks = process.env.AISDK7 === '1';
// flow().checks: the checks of the flow's responses; flow().sent: the
// request bodies its Chat posted.
// What the fake model of lineBreaks_test.go sends (lineBreaks flow).
// A one-pixel PNG's first bytes (what the server sniffs as image/png).
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ';
const ODD = 'Ber\nlin\r\n\u2028x';
const ODD_TEXT = 'Line one\nline two\r\nthree\u2028four';

// checkingFetch tees every chat response: the client reads one copy, the
// other is validated here.
async function checkingFetch(input, init) {
  const res = await cookieFetch(input, init);
  if (!res.ok || !res.body) return res;
  const body = init.body ? JSON.parse(init.body) : { messages: [] }; // GET: a resumed stream
  if (init.body) flow().sent.push(body);
  const last = body.messages.at(-1);
  const [forClient, forCheck] = res.body.tee();
  const check = checkStream(res.headers, forCheck, last?.role === 'assistant' ? last : undefined).catch((e) => {
    if (init.signal?.aborted) return { aborted: true, chunks: [], errors: [] }; // the client stopped reading
    throw e;
  });
  check.catch(() => {}); // reported where awaited
  flow().checks.push(check);
  return new Response(forClient, { status: res.status, statusText: res.statusText, headers: res.headers });
}

async function checkStream(headers, body, continued) {
  assert.equal(headers.get('content-type'), 'text/event-stream');
  assert.equal(headers.get('x-vercel-ai-ui-message-stream'), 'v1');
  const text = await new Response(body).text();
  assert.ok(text.endsWith('data: [DONE]\n\n'), 'the stream ends with data: [DONE]');
  assert.ok(!text.includes('\r'), 'LF framing');
  const chunks = [];
  let lastId = 0;
  // A steering request's answer (its outcome alone) comes from no run log.
  const fromLog = history && !text.includes('"type":"data-steering"');
  for (let frame of text.split('\n\n')) {
    if (frame === '' || frame.startsWith(':')) continue; // an SSE comment: a keep-alive
    // With history every frame of a run carries the id of the run-log
    // event it comes from (for Last-Event-ID); ids never go back. A queued
    // message's outcome comes before its run, from no log.
    const id = /^id: (\d+)\n/.exec(frame);
    const outcome = frame.startsWith('data: {"type":"data-queue"');
    assert.equal(Boolean(id), fromLog && !outcome, 'frames carry ids exactly when they come from a run log: ' + frame);
    if (id) {
      assert.ok(Number(id[1]) >= lastId, 'ids never go back');
      lastId = Number(id[1]);
      frame = frame.slice(id[0].length);
    }
    assert.ok(frame.startsWith('data: ') && !frame.includes('\n'), 'one data line per frame: ' + frame);
    const data = frame.slice('data: '.length);
    if (data === '[DONE]') continue;
    const chunk = JSON.parse(data);
    const result = await uiMessageChunkSchema().validate(chunk);
    if (!result.success) throw new Error(`uiMessageChunkSchema rejects ${data}: ${result.error}`);
    chunks.push(chunk);
  }
  // A queued message's outcome (transient: the message is untouched)
  // comes before its turn's start.
  assert.equal(chunks.find((c) => c.type !== 'data-queue')?.type, 'start', 'start comes first');
  assert.ok(['finish', 'abort'].includes(chunks.at(-1).type), 'finish or abort comes last');
  // Rebuild the message with the SDK's own stream processor.
  const stream = new ReadableStream({
    start(c) {
      for (const ch of chunks) c.enqueue(ch);
      c.close();
    },
  });
  const errors = [];
  let message;
  for await (const m of readUIMessageStream({ stream, message: continued && structuredClone(continued), onError: (e) => errors.push(e) })) {
    message = m;
  }
  return { chunks, message, errors };
}

async function until(cond, what, ms = 10000) {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for ' + what);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function newChat(options = {}) {
  return new Chat({
    id: `conformance-${flow().name}-${Math.random().toString(36).slice(2)}`,
    transport: new DefaultChatTransport({ api: base + '/api/chat', fetch: checkingFetch }),
    ...options,
  });
}

const sealedOf = (md) => md?.agentui?.sealed;
// sealedValues lists the sealed values of parts, in order.
const sealedValues = (parts) => parts.map((p) => sealedOf(p.providerMetadata ?? p.callProviderMetadata)).filter(Boolean);
const assistant = (chat) => chat.messages.filter((m) => m.role === 'assistant').at(-1);
const texts = (m) => m.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
const toolPart = (m, name) => m.parts.find((p) => p.type === 'tool-' + name);

async function settled(chat) {
  await until(() => chat.status === 'ready' || chat.status === 'error', 'the chat to settle');
  await Promise.all(flow().checks);
}

// approvalResponseChunk checks the continuation's tool-approval-response:
// present (AI SDK 7 chunks on) and before the call's outcome, or absent.
async function approvalResponseChunk(want) {
  const { chunks } = await flow().checks.at(-1);
  const i = chunks.findIndex((c) => c.type === 'tool-approval-response');
  if (!v7Chunks) {
    assert.equal(i, -1, 'tool-approval-response is an AI SDK 7 chunk');
    return;
  }
  assert.deepEqual(chunks[i], { type: 'tool-approval-response', ...want });
  assert.ok(chunks[i + 1].type.startsWith('tool-output-'), 'the outcome follows the approval response');
}

const flows = {
  async chat() {
    const chat = newChat();
    await chat.sendMessage({ text: 'Hello there' });
    await settled(chat);
    assert.equal(chat.status, 'ready');
    assert.equal(chat.messages.length, 2);
    assert.equal(texts(assistant(chat)), 'You said: Hello there');
    return chat;
  },

  // Usage reaches message.metadata (start: createdAt; finish: usage,
  // model, finishReason), and the stored conversation returns the same.
  async metadata() {
    const chat = newChat();
    const before = Date.now();
    await chat.sendMessage({ text: 'Hello there' });
    await settled(chat);
    const md = assistant(chat).metadata;
    assert.ok(md, 'the reply has metadata');
    // A server speaking to AI SDK 7 gives usage in its shape.
    const usage = v7Chunks
      ? { inputTokens: 2, inputTokenDetails: { noCacheTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 }, outputTokens: 4, outputTokenDetails: { textTokens: 4, reasoningTokens: 0 }, totalTokens: 6 }
      : { inputTokens: 2, outputTokens: 4, totalTokens: 6 };
    assert.deepEqual(md.usage, usage);
    assert.equal(md.model, 'agentui-demo');
    assert.equal(md.finishReason, 'stop');
    assert.ok(md.createdAt >= before - 1000 && md.createdAt <= Date.now(), `createdAt ${md.createdAt}`);
    if (!history) return chat;
    const stored = await (await cookieFetch(`${base}/api/chat/${chat.id}`)).json();
    const reloaded = new Chat({ id: chat.id, messages: stored, transport: new DefaultChatTransport({ api: base + '/api/chat', fetch: checkingFetch }) });
    assert.deepEqual(assistant(reloaded).metadata, md, 'the reloaded reply has the same metadata');
    return reloaded;
  },

  async reasoning() {
    const chat = newChat();
    await chat.sendMessage({ text: 'think about it' });
    await settled(chat);
    const m = assistant(chat);
    const reasoning = m.parts.find((p) => p.type === 'reasoning');
    assert.equal(reasoning.text, 'Thinking about: think about it');
    assert.equal(reasoning.state, 'done');
    assert.equal(texts(m), 'You said: think about it');
    return chat;
  },

  async serverTool() {
    const chat = newChat();
    await chat.sendMessage({ text: 'What is the weather in Paris?' });
    await settled(chat);
    const m = assistant(chat);
    const tool = toolPart(m, 'get_weather');
    assert.equal(tool.state, 'output-available');
    assert.deepEqual(tool.input, { city: 'Paris' });
    assert.deepEqual(tool.output, { city: 'Paris', forecast: 'sunny', temperature_c: 21 });
    assert.equal(texts(m), 'The weather in Paris is sunny, 21°C.');
    assert.equal(m.parts.filter((p) => p.type === 'step-start').length, 2);
    return chat;
  },

  // A tool that streams: research sends three progress updates, each a
  // preliminary tool-output-available (valid by the SDK's schema; the Chat
  // shows it as the part's output), then its result; the Chat ends with
  // the result, not preliminary, and the stored conversation has only it.
  async streamingTool() {
    const chat = newChat();
    const shown = []; // the tool part's outputs as the Chat showed them (useChat's own subscription)
    const unsubscribe = chat['~registerMessagesCallback'](() => {
      const part = assistant(chat) && toolPart(assistant(chat), 'research');
      const out = part?.output && JSON.stringify({ step: part.output.step ?? 'final', preliminary: !!part.preliminary });
      if (out && shown.at(-1) !== out) shown.push(out);
    });
    await chat.sendMessage({ text: 'research owls' });
    await settled(chat);
    unsubscribe();
    const { chunks } = await flow().checks.at(-1);
    const outputs = chunks.filter((c) => c.type === 'tool-output-available');
    assert.deepEqual(outputs.map((c) => [c.output.step ?? 'final', !!c.preliminary]), [[1, true], [2, true], [3, true], ['final', false]]);
    assert.equal(outputs[2].output.status, 'Summarizing');
    assert.deepEqual(shown.map((s) => JSON.parse(s)), [1, 2, 3, 'final'].map((step) => ({ step, preliminary: step !== 'final' })), 'the Chat showed each output');
    const tool = toolPart(assistant(chat), 'research');
    assert.equal(tool.state, 'output-available');
    assert.ok(!tool.preliminary, 'the final output is not preliminary');
    assert.deepEqual(tool.output, { topic: 'owls', summary: '3 sources agree that owls is worth a closer look.', sources: 3 });
    assert.equal(texts(assistant(chat)), 'Research on owls: 3 sources agree that owls is worth a closer look.');
    const source = assistant(chat).parts.find((p) => p.type === 'source-url');
    assert.equal(source?.url, 'https://example.com/research/owls', 'the tool cited its source');
    assert.equal(source.title, 'owls: an overview');
    if (history) {
      const stored = await (await cookieFetch(`${base}/api/chat/${chat.id}`)).json();
      const storedTool = toolPart(stored.at(-1), 'research');
      assert.deepEqual(storedTool.output, tool.output, 'the stored call has the final result');
      assert.ok(!JSON.stringify(stored).includes('Reading 3 sources'), 'no progress is stored');
      assert.equal(stored.at(-1).parts.find((p) => p.type === 'source-url')?.url, source.url, 'the source is stored');
    }
    return chat;
  },

  // With the fake OpenAI-compatible model of lineBreaks_test.go: tool
  // arguments, a tool output and text that hold LF, CRLF and U+2028, as a
  // real model may send them, each event still one data line.
  async lineBreaks() {
    const chat = newChat({ sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
    await chat.sendMessage({ text: 'weather' });
    await settled(chat);
    const weather = toolPart(assistant(chat), 'get_weather');
    assert.equal(weather.state, 'output-available');
    assert.deepEqual(weather.input, { city: ODD });
    assert.equal(weather.output.city, ODD);
    assert.equal(texts(assistant(chat)), ODD_TEXT);
    // The odd input goes back in the next request, and its approval's
    // signature must verify against it.
    await chat.sendMessage({ text: 'delete' });
    await settled(chat);
    const asked = toolPart(assistant(chat), 'delete_file');
    assert.equal(asked.state, 'approval-requested');
    assert.deepEqual(asked.input, { path: ODD });
    await chat.addToolApprovalResponse({ id: asked.approval.id, approved: true });
    await until(() => chat.status === 'ready' && toolPart(assistant(chat), 'delete_file').state === 'output-available', 'the approved call to run');
    await settled(chat);
    assert.deepEqual(toolPart(assistant(chat), 'delete_file').output, { deleted: ODD });
    return chat;
  },

  // An attack: the client adds a second delete_file part with the signed
  // call's id and other input, then approves. The request is refused (400)
  // and nothing runs; the genuine approval then runs the call that was
  // asked about, once.
  async duplicateCallIds() {
    const chat = newChat({ sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
    await chat.sendMessage({ text: 'delete /tmp/x.txt' });
    await settled(chat);
    const m = assistant(chat);
    const asked = toolPart(m, 'delete_file');
    assert.equal(asked.state, 'approval-requested');
    chat.messages = [...chat.messages.slice(0, -1), { ...m, parts: [...m.parts, { ...asked, input: { path: '/etc/passwd' } }] }];
    await chat.addToolApprovalResponse({ id: asked.approval.id, approved: true });
    await until(() => chat.status === 'error', 'the forged request to be refused');
    assert.match(chat.error.message, /two tool calls share one id/);
    const forged = assistant(chat);
    chat.messages = [...chat.messages.slice(0, -1), { ...forged, parts: forged.parts.slice(0, -1) }];
    await chat.sendMessage();
    await until(() => chat.status === 'ready' && texts(assistant(chat)) !== '', 'the genuine continuation');
    await settled(chat);
    const done = assistant(chat).parts.filter((p) => p.type === 'tool-delete_file');
    assert.equal(done.length, 1);
    assert.deepEqual(done[0].output, { deleted: '/tmp/x.txt' });
    assert.equal(texts(assistant(chat)), 'Deleted /tmp/x.txt.');
    return chat;
  },

  // Against a server without history whose model (Gemini, Anthropic)
  // talks to its validating fake (sealed_test.go): the provider values of
  // each part travel sealed, as the part's providerMetadata (a call's as
  // its callProviderMetadata), opaque to the client, and go back
  // unchanged with the approval and with the next message.
  // sealedTampered alters the step's last value before approving: the
  // run goes on (the server drops it; sealed_test.go checks what reached
  // the model).
  async sealed() {
    const chat = newChat({ sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
    await chat.sendMessage({ text: 'delete /tmp/x.txt' });
    await settled(chat);
    const m = assistant(chat);
    const asked = toolPart(m, 'delete_file');
    assert.equal(asked.state, 'approval-requested');
    const values = sealedValues(m.parts);
    assert.ok(values.length > 0, 'the step carries sealed values: ' + JSON.stringify(m.parts));
    for (const v of values) assert.match(v, /^[A-Za-z0-9_-]{40,}$/, 'a sealed value is base64url');
    for (const p of m.parts) {
      const md = p.providerMetadata ?? p.callProviderMetadata;
      if (md) assert.deepEqual(Object.keys(md), ['agentui'], 'nothing but the sealed value');
    }
    if (flow().name === 'sealedTampered') {
      const last = m.parts.findLast((p) => sealedOf(p.providerMetadata ?? p.callProviderMetadata));
      const key = last.callProviderMetadata ? 'callProviderMetadata' : 'providerMetadata';
      const v = values.at(-1);
      const i = v.length >> 1;
      values[values.length - 1] = v.slice(0, i) + (v[i] === 'A' ? 'B' : 'A') + v.slice(i + 1);
      const tampered = { ...last, [key]: { agentui: { sealed: values.at(-1) } } };
      chat.messages = [...chat.messages.slice(0, -1), { ...m, parts: m.parts.map((p) => (p === last ? tampered : p)) }];
    }
    await chat.addToolApprovalResponse({ id: asked.approval.id, approved: true });
    await until(() => chat.status === 'ready' && texts(assistant(chat)) !== '', 'the continuation');
    await settled(chat);
    assert.equal(texts(assistant(chat)), 'Deleted /tmp/x.txt.');
    assert.deepEqual(toolPart(assistant(chat), 'delete_file').output, { deleted: '/tmp/x.txt' });
    await chat.sendMessage({ text: 'thanks' });
    await settled(chat);
    assert.equal(texts(assistant(chat)), 'You are welcome.');
    // What the Chat sent back: the step's values as the server sealed
    // them (or as the client altered them), each with its part.
    assert.equal(flow().sent.length, 3);
    for (const body of flow().sent.slice(1)) {
      const parts = body.messages.find((x) => x.role === 'assistant').parts;
      const second = parts.findIndex((p, i) => i > 0 && p.type === 'step-start');
      assert.deepEqual(sealedValues(second < 0 ? parts : parts.slice(0, second)), values);
    }
    return chat;
  },
  async sealedTampered() {
    return flows.sealed();
  },

  // An agent of another framework behind agentui (adapters/eino and
  // adapters/genkit examples, over the demo model with get_weather and
  // delete_file): a multi-turn chat with a tool, an approval granted and
  // one denied, and the model shown the whole conversation at the end.
  async frameworkAgent() {
    const chat = newChat({ sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
    await chat.sendMessage({ text: 'weather in Paris' });
    await settled(chat);
    assert.equal(texts(assistant(chat)), 'The weather in Paris is sunny, 21°C.');
    assert.deepEqual(toolPart(assistant(chat), 'get_weather').output, { city: 'Paris', forecast: 'sunny', temperature_c: 21 });
    for (const [path, approved, want] of [['/tmp/x.txt', true, 'Deleted /tmp/x.txt.'], ['/tmp/y.txt', false, 'Okay, I did not delete /tmp/y.txt (reason: not that one).']]) {
      await chat.sendMessage({ text: 'delete ' + path });
      await settled(chat);
      const asked = toolPart(assistant(chat), 'delete_file');
      assert.equal(asked.state, 'approval-requested');
      assert.ok(asked.approval.signature, 'the approval request is signed');
      await chat.addToolApprovalResponse({ id: asked.approval.id, approved, ...(approved ? {} : { reason: 'not that one' }) });
      await until(() => chat.status === 'ready' && texts(assistant(chat)) !== '', 'the continuation');
      await settled(chat);
      assert.equal(toolPart(assistant(chat), 'delete_file').state, approved ? 'output-available' : 'output-denied');
      assert.equal(texts(assistant(chat)), want);
    }
    await chat.sendMessage({ text: '/context' });
    await settled(chat);
    const seen = JSON.parse(texts(assistant(chat))).map((m) => m.role + (m.parts.find((p) => p.startsWith('tool_')) ? ':' + m.parts.find((p) => p.startsWith('tool_')) : ''));
    assert.deepEqual(seen.filter((r) => r !== 'system'), [
      'user', 'assistant:tool_call:get_weather', 'tool:tool_result:get_weather', 'assistant',
      'user', 'assistant:tool_call:delete_file', 'tool:tool_result:delete_file', 'assistant',
      'user', 'assistant:tool_call:delete_file', 'tool:tool_result:delete_file', 'assistant',
      'user',
    ], 'the model saw the whole conversation: ' + JSON.stringify(seen));
    if (history) {
      const stored = await (await cookieFetch(`${base}/api/chat/${chat.id}`)).json();
      assert.equal(stored.length, 8, 'four turns stored');
    }
    return chat;
  },

  // An MCP server's tools (conformance TestMCPThroughRealClients: the
  // examples/mcp notes server over stdio): add asks for approval, and a
  // denied add never reaches the server; list is read-only and returns
  // structured content; tidy streams its passes as preliminary output;
  // an error the server returns is the tool part's error.
  async mcpTools() {
    const chat = newChat({ sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
    const answer = async (text, approved) => {
      await chat.sendMessage({ text });
      await settled(chat);
      const asked = toolPart(assistant(chat), 'notes_add');
      assert.equal(asked.state, 'approval-requested', 'notes_add asks first');
      await chat.addToolApprovalResponse({ id: asked.approval.id, approved });
      await until(() => chat.status === 'ready' && texts(assistant(chat)) !== '', 'the continuation');
      await settled(chat);
      return toolPart(assistant(chat), 'notes_add');
    };
    let tool = await answer('call notes_add {"text":"milk"}', true);
    assert.equal(tool.state, 'output-available');
    assert.equal(texts(assistant(chat)), 'notes_add returned: "Noted (1 notes)."');
    tool = await answer('call notes_add {"text":"eggs"}', false);
    assert.equal(tool.state, 'output-denied');
    await chat.sendMessage({ text: 'call notes_list' });
    await settled(chat);
    assert.deepEqual(toolPart(assistant(chat), 'notes_list').output, { notes: ['milk'] }, 'the denied note never reached the server');

    const shown = [];
    const unsubscribe = chat['~registerMessagesCallback'](() => {
      const part = assistant(chat) && toolPart(assistant(chat), 'notes_tidy');
      const out = part?.output && JSON.stringify({ output: part.output, preliminary: !!part.preliminary });
      if (out && shown.at(-1) !== out) shown.push(out);
    });
    await chat.sendMessage({ text: 'call notes_tidy {"steps":2}' });
    await settled(chat);
    unsubscribe();
    const { chunks } = await flow().checks.at(-1);
    const outputs = chunks.filter((c) => c.type === 'tool-output-available');
    assert.deepEqual(outputs.at(-1).output, 'Tidied in 2 passes.');
    const passes = outputs.slice(0, -1);
    assert.ok(passes.length >= 1 && passes.every((c, i) => c.preliminary && c.output.progress === i + 1 && c.output.total === 2), 'the passes, in order: ' + JSON.stringify(passes));
    assert.equal(JSON.parse(shown.at(-1)).preliminary, false, 'the Chat ends on the result');
    assert.ok(shown.slice(0, -1).every((s) => JSON.parse(s).preliminary), 'the Chat showed the passes before it');
    assert.equal(texts(assistant(chat)), 'notes_tidy returned: "Tidied in 2 passes."');

    await chat.sendMessage({ text: 'call notes_tidy {"steps":0}' });
    await settled(chat);
    tool = toolPart(assistant(chat), 'notes_tidy');
    assert.equal(tool.state, 'output-error');
    assert.equal(tool.errorText, 'steps must be 1 to 10, not 0');
    assert.equal(texts(assistant(chat)), 'notes_tidy failed: steps must be 1 to 10, not 0');
    assert.equal(chat.status, 'ready', 'a tool error is no failed reply');
    return chat;
  },

  async approvalGranted() {
    const chat = newChat({ sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
    await chat.sendMessage({ text: 'delete /tmp/x.txt' });
    await settled(chat);
    const asked = toolPart(assistant(chat), 'delete_file');
    assert.equal(asked.state, 'approval-requested');
    assert.ok(asked.approval.signature, 'the approval request is signed');
    const id = assistant(chat).id;
    await chat.addToolApprovalResponse({ id: asked.approval.id, approved: true });
    await until(() => chat.status === 'ready' && texts(assistant(chat)) !== '', 'the continuation');
    await settled(chat);
    const m = assistant(chat);
    assert.equal(chat.messages.length, 2, 'the continuation continues the same message');
    assert.equal(m.id, id);
    assert.equal(toolPart(m, 'delete_file').state, 'output-available');
    assert.deepEqual(toolPart(m, 'delete_file').output, { deleted: '/tmp/x.txt' });
    assert.equal(texts(m), 'Deleted /tmp/x.txt.');
    await approvalResponseChunk({ approvalId: asked.approval.id, approved: true });
    return chat;
  },

  async approvalDenied() {
    const chat = newChat({ sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
    await chat.sendMessage({ text: 'delete /tmp/x.txt' });
    await settled(chat);
    const asked = toolPart(assistant(chat), 'delete_file');
    await chat.addToolApprovalResponse({ id: asked.approval.id, approved: false, reason: 'user said no' });
    await until(() => chat.status === 'ready' && texts(assistant(chat)) !== '', 'the continuation');
    await settled(chat);
    const m = assistant(chat);
    assert.equal(chat.messages.length, 2);
    assert.equal(toolPart(m, 'delete_file').state, 'output-denied');
    assert.equal(texts(m), 'Okay, I did not delete /tmp/x.txt (reason: user said no).');
    await approvalResponseChunk({ approvalId: asked.approval.id, approved: false, reason: 'user said no' });
    return chat;
  },

  // The policy flows run against a server with the demo policies
  // (conformance TestVercelPolicy, internal/testkit/testutil DemoPolicies).
  // A call the policy denies never asks for approval: it ends in an
  // error that says the policy refused it, and the reply says so.
  async policyDenied() {
    const chat = newChat({ sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
    await chat.sendMessage({ text: 'delete /etc/passwd' });
    await settled(chat);
    const m = assistant(chat);
    const call = toolPart(m, 'delete_file');
    assert.equal(call.state, 'output-error');
    assert.equal(call.approval, undefined, 'no approval was asked');
    assert.equal(call.errorText, 'This tool call was denied by policy: files may be deleted only under /tmp');
    assert.match(texts(m), /failed: This tool call was denied by policy: files may be deleted only under \/tmp/);
    assert.equal(chat.messages.length, 2);
    return chat;
  },

  // A policy makes a tool that needs no approval wait for one.
  async policyApproval() {
    const chat = newChat({ sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
    await chat.sendMessage({ text: 'weather in Area 51' });
    await settled(chat);
    const asked = toolPart(assistant(chat), 'get_weather');
    assert.equal(asked.state, 'approval-requested');
    assert.ok(asked.approval.signature, 'the approval request is signed');
    await chat.addToolApprovalResponse({ id: asked.approval.id, approved: true });
    await until(() => chat.status === 'ready' && texts(assistant(chat)) !== '', 'the continuation');
    await settled(chat);
    const m = assistant(chat);
    assert.equal(toolPart(m, 'get_weather').state, 'output-available');
    assert.equal(texts(m), 'The weather in Area 51 is sunny, 21°C.');
    if (history) {
      // The result's label is stored with the reply and shows on reload.
      const stored = await (await cookieFetch(`${base}/api/chat/${chat.id}`)).json();
      assert.deepEqual(stored.at(-1).metadata.labels, ['external']);
    }
    return chat;
  },

  // The card number is redacted before the model sees it; a denied
  // message is refused (403) with the policy's reason, and one a policy
  // failed on with no detail.
  async policyInput() {
    const chat = newChat();
    await chat.sendMessage({ text: 'my card is 4111 1111 1111 1111' });
    await settled(chat);
    assert.equal(texts(assistant(chat)), 'You said: my card is [card number]');
    if (history) {
      const stored = await (await cookieFetch(`${base}/api/chat/${chat.id}`)).json();
      assert.deepEqual(stored[0].metadata, { labels: ['PII'] });
      assert.equal(stored[0].parts[0].text, 'my card is [card number]');
    }
    await chat.sendMessage({ text: 'my password: hunter2' });
    await until(() => chat.status === 'error', 'the denial');
    assert.match(chat.error.message, /do not paste passwords into the chat/);
    await Promise.all(flow().checks);
    chat.clearError();
    await chat.sendMessage({ text: 'please break the policy' });
    await until(() => chat.status === 'error', 'the refusal');
    assert.match(chat.error.message, /a policy could not be evaluated/);
    await Promise.all(flow().checks);
    chat.clearError();
    return chat;
  },

  async clientTool() {
    let chat;
    chat = newChat({
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
      onToolCall: ({ toolCall }) => {
        if (toolCall.toolName === 'get_location') {
          chat.addToolOutput({ tool: 'get_location', toolCallId: toolCall.toolCallId, output: { city: 'Paris' } });
        }
      },
    });
    await chat.sendMessage({ text: 'Where am I?' });
    await until(() => chat.status === 'ready' && texts(assistant(chat)) !== '', 'the client tool round trip');
    await settled(chat);
    const m = assistant(chat);
    assert.equal(chat.messages.length, 2);
    assert.equal(toolPart(m, 'get_location').state, 'output-available');
    assert.equal(texts(m), 'You are in Paris.');
    return chat;
  },

  async regenerate() {
    const chat = newChat();
    await chat.sendMessage({ text: 'Say something' });
    await settled(chat);
    const first = assistant(chat).id;
    await chat.regenerate();
    await settled(chat);
    assert.equal(chat.messages.length, 2);
    assert.notEqual(assistant(chat).id, first, 'a regenerated message has a new id');
    assert.equal(texts(assistant(chat)), 'You said: Say something');
    return chat;
  },

  // regenerate({messageId}) and sendMessage({messageId}) (an edit under
  // the message's own id), as the AI SDK documents them; with history the
  // server keeps each replaced version as another branch: the tree lists
  // them, a switch brings one back as the chat a reload loads, and the
  // Chat set to it goes on from there.
  async branches() {
    const chat = newChat();
    await chat.sendMessage({ text: 'one' });
    await settled(chat);
    await chat.sendMessage({ text: 'two' });
    await settled(chat);
    const [u1, , u2, a2] = chat.messages;
    await chat.regenerate({ messageId: a2.id });
    await settled(chat);
    assert.equal(chat.error, undefined, String(chat.error));
    assert.notEqual(assistant(chat).id, a2.id, 'the regenerated reply has a new id');
    await chat.sendMessage({ text: 'two, edited', messageId: u2.id });
    await settled(chat);
    assert.equal(chat.error, undefined, String(chat.error));
    assert.deepEqual(chat.messages.map(texts), ['one', 'You said: one', 'two, edited', 'You said: two, edited']);
    if (!history) return chat;
    const tree = await (await cookieFetch(`${base}/api/chat/${chat.id}/tree`)).json();
    const kids = (parent) => tree.messages.filter((m) => (m.parentId ?? null) === parent).map((m) => texts(m.message));
    const a1 = chat.messages[1].id;
    assert.deepEqual(kids(a1), ['two', 'two, edited'], "the edit's versions, the first first");
    const old = tree.messages.find((m) => texts(m.message) === 'two').message.id;
    assert.notEqual(old, u2.id, 'the replaced version keeps another id');
    assert.deepEqual(kids(old), ['You said: two', 'You said: two'], "the regeneration's versions");
    assert.equal(tree.headId, assistant(chat).id);
    const res = await cookieFetch(`${base}/api/chat/${chat.id}/branch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: old }) });
    assert.equal(res.status, 204, await res.text());
    const stored = await (await cookieFetch(`${base}/api/chat/${chat.id}`)).json();
    assert.deepEqual(stored.map(texts), ['one', 'You said: one', 'two', 'You said: two']);
    assert.equal(stored[0].id, u1.id);
    chat.messages = stored;
    await chat.sendMessage({ text: 'three' });
    await settled(chat);
    const after = await (await cookieFetch(`${base}/api/chat/${chat.id}`)).json();
    assert.deepEqual(after.map(texts), ['one', 'You said: one', 'two', 'You said: two', 'three', 'You said: three']);
    return chat;
  },

  // A file sent with a message (useChat's files, a data URL): the model is
  // given its bytes; with history the server keeps it by reference, a
  // reload shows a URL that reads it, and a thread resent from that
  // reload carries the URL, not the bytes again.
  async files() {
    const chat = newChat();
    await chat.sendMessage({ text: '/context', files: [{ type: 'file', mediaType: 'image/png', filename: 'cat.png', url: 'data:image/png;base64,' + PNG }] });
    await settled(chat);
    assert.equal(chat.error, undefined, String(chat.error));
    assert.match(texts(assistant(chat)), /"parts":\["image:base64","text"\]/);
    if (!history) return chat;
    const stored = await (await cookieFetch(`${base}/api/chat/${chat.id}`)).json();
    const file = stored[0].parts.find((p) => p.type === 'file');
    assert.match(file.url, /^\/api\/files\/sha256-[0-9a-f]{64}\?exp=\d+&sig=/);
    const res = await cookieFetch(base + file.url);
    assert.equal(res.status, 200);
    assert.equal(Buffer.from(await res.arrayBuffer()).toString('base64'), PNG);
    chat.messages = stored;
    await chat.sendMessage({ text: '/context' });
    await settled(chat);
    assert.equal(chat.error, undefined, String(chat.error));
    assert.ok(!JSON.stringify(flow().sent.at(-1)).includes(PNG), 'the resent thread carries no bytes');
    assert.match(texts(assistant(chat)), /"parts":\["image:base64","text"\]/, 'the model is given the file again');
    return chat;
  },

  async count5000() {
    const chat = newChat();
    await chat.sendMessage({ text: 'count to 5000' });
    await settled(chat);
    const want = Array.from({ length: 5000 }, (_, i) => `${i + 1} `).join('');
    assert.equal(texts(assistant(chat)), want);
    const { chunks } = await flow().checks.at(-1);
    assert.equal(chunks.filter((c) => c.type === 'text-delta').length, 5000);
    return chat;
  },

  async modelError() {
    const chat = newChat();
    await chat.sendMessage({ text: 'fail' });
    await settled(chat);
    assert.equal(chat.status, 'error');
    assert.equal(chat.error.message, 'An error occurred.');
    assert.equal(texts(assistant(chat)), 'Working on it', 'the partial message is kept');
    const { chunks, errors } = await flow().checks.at(-1);
    assert.deepEqual(chunks.find((c) => c.type === 'error'), { type: 'error', errorText: 'An error occurred.' });
    assert.equal(errors.length, 1);
    return chat;
  },

  async clientAbort() {
    const chat = newChat();
    const sent = chat.sendMessage({ text: 'wait 5000 ms' });
    // The start chunk adds the assistant message (status stays 'submitted'
    // until content arrives, as with the SDK's own server).
    await until(() => chat.messages.length === 2, 'the stream to start');
    const started = Date.now();
    if (history) {
      // With history a run outlives its request: aborting the fetch
      // leaves it running, and Stop asks the server to stop it.
      const res = await cookieFetch(`${base}/api/chat/${chat.id}/stop`, { method: 'POST' });
      assert.equal(res.status, 202, 'the stop endpoint accepts');
    }
    await chat.stop();
    await sent;
    await until(() => chat.status === 'ready', 'the chat to stop');
    assert.ok(Date.now() - started < 2000, 'stop returns promptly');
    // The server keeps serving.
    await chat.sendMessage({ text: 'still there?' });
    await until(() => chat.status === 'ready' && texts(assistant(chat)) === 'You said: still there?', 'the next reply');
    return chat;
  },
  // stop() as a plain useChat page calls it (it only aborts the fetch),
  // then the next message. With history the run outlived the fetch; the
  // next message shows the reply, so it stops it and is answered at once,
  // and the stopped reply is stored as stopped, not finished later.
  async stopThenSend() {
    const chat = newChat();
    const sent = chat.sendMessage({ text: 'think: wait 5000 ms' });
    await until(() => assistant(chat)?.parts.some((p) => p.type === 'reasoning' && p.text.endsWith('ms')), 'the reasoning');
    await chat.stop();
    await sent;
    await until(() => chat.status === 'ready', 'the chat to stop');
    const stoppedId = assistant(chat).id;
    await chat.sendMessage({ text: 'hello' });
    await until(() => chat.status !== 'submitted' && chat.status !== 'streaming', 'the next reply');
    assert.equal(chat.status, 'ready', String(chat.error));
    assert.equal(texts(assistant(chat)), 'You said: hello');
    assert.deepEqual(chat.messages.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
    if (history) {
      const stored = await (await cookieFetch(`${base}/api/chat/${chat.id}`)).json();
      assert.deepEqual(stored.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
      assert.equal(stored[1].id, stoppedId, 'the stopped reply is stored under its id');
      assert.equal(texts(stored[1]), '', 'the stopped reply was not finished in the background');
    }
    return chat;
  },
  // A message sent with busy "steer" (sendMessage's body option) while
  // the reply runs: the running reply takes it once its model has
  // answered, and answers it in another step. The first response shows it
  // (AI SDK 7: a steering-message part; 6: a data-steering-message part)
  // and then the answer; the steering request's own response adds no
  // message, only its outcome (a transient data-steering chunk, which
  // onData sees). The chat stores it where the model saw it. Without
  // history nothing runs apart from its request: the message is a turn of
  // its own.
  // A reply whose server hands it over mid-step (it shuts down while
  // another replica shares its run log; DRAIN starts that, OTHER is the
  // other replica): the other runs the step again. AI SDK 7 drops the
  // voided step (reset-step) and shows the reply once; AI SDK 6 keeps it,
  // closed, with the new step after it, and gets a data-reset-step part.
  // Nothing breaks either client, and the stored reply is the new step's.
  async redrive() {
    let resets = 0;
    const chat = newChat({ onData: (p) => { if (p.type === 'data-reset-step') resets++; } });
    const words = Array.from({ length: 150 }, (_, i) => `w${i + 1}`).join(' ');
    const want = 'You said: please say back slowly: ' + words;
    const sent = chat.sendMessage({ text: 'please say back slowly: ' + words });
    await until(() => assistant(chat) && texts(assistant(chat)).includes(' w5 '), 'the first words');
    assert.equal((await fetch(process.env.DRAIN, { method: 'POST' })).status, 204);
    await sent;
    await settled(chat);
    assert.equal(chat.status, 'ready', String(chat.error));
    const reply = assistant(chat);
    if (v7Chunks) {
      const [{ chunks }] = await Promise.all(flow().checks);
      assert.equal(chunks.filter((c) => c.type === 'reset-step').length, 1, 'one reset-step');
      assert.equal(texts(reply), want, 'the voided step is gone');
      assert.deepEqual(reply.parts.map((p) => p.type), ['step-start', 'text']);
    } else {
      assert.equal(resets, 1, 'one data-reset-step');
      assert.ok(texts(reply).endsWith(want) && texts(reply) !== want, 'the voided step, then the new one');
    }
    const stored = await (await cookieFetch(`${process.env.OTHER}/api/chat/${chat.id}`)).json();
    assert.equal(texts(stored.at(-1)), want, 'stored: the new step only');
    return chat;
  },

  async steer() {
    const outcomes = [];
    const chat = newChat({ onData: (d) => outcomes.push(d) });
    const first = chat.sendMessage({ text: 'think: wait 2500 ms' });
    await until(() => assistant(chat)?.parts.some((p) => p.type === 'reasoning' && p.text.endsWith('ms')), 'the reasoning');
    const replyId = assistant(chat).id;
    await chat.sendMessage({ text: 'hello' }, { body: { busy: 'steer' } });
    await first;
    await settled(chat);
    assert.equal(chat.error, undefined, String(chat.error));
    const steerId = chat.messages.at(-1).id;
    if (!history) {
      assert.deepEqual(chat.messages.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
      assert.equal(texts(chat.messages[3]), 'You said: hello');
      return chat;
    }
    assert.deepEqual(chat.messages.map((m) => m.role), ['user', 'assistant', 'user'], 'the steering request adds no reply of its own');
    assert.deepEqual(outcomes.filter((o) => o.type === 'data-steering').map((o) => [o.data.outcome, o.data.messageId]), [['delivered', steerId]]);
    const reply = chat.messages.find((m) => m.id === replyId);
    const shown = reply.parts.find((p) => p.type === (v7Chunks ? 'steering-message' : 'data-steering-message'));
    assert.ok(shown, 'the reply shows the steering message: ' + JSON.stringify(reply.parts));
    assert.equal(shown.id, steerId);
    assert.deepEqual(v7Chunks ? shown.parts : shown.data.parts, [{ type: 'text', text: 'hello' }]);
    assert.equal(texts(reply), 'doneYou said: hello', 'the reply answers it after its first answer');
    const stored = await (await cookieFetch(`${base}/api/chat/${chat.id}`)).json();
    assert.deepEqual(stored.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
    assert.equal(stored[2].id, steerId, 'stored where the model saw it');
    assert.equal(texts(stored[3]), 'You said: hello');
    return chat;
  },
  // A message sent with busy "queue" while the reply runs waits with the
  // chat: its request is answered "queued" at once (a transient data-queue
  // chunk, which onData sees), the reply goes on undisturbed, and once it
  // has ended the same request streams the message's own turn. Without
  // history nothing runs apart from its request: the message is a turn of
  // its own.
  async queue() {
    const outcomes = [];
    const chat = newChat({ onData: (d) => outcomes.push(d) });
    const first = chat.sendMessage({ text: 'think: wait 1500 ms' });
    await until(() => assistant(chat)?.parts.some((p) => p.type === 'reasoning' && p.text.endsWith('ms')), 'the reasoning');
    const replyId = assistant(chat).id;
    await chat.sendMessage({ text: 'hello' }, { body: { busy: 'queue' } });
    await first;
    await settled(chat);
    assert.equal(chat.error, undefined, String(chat.error));
    const queuedId = chat.messages.find((m) => m.role === 'user' && texts(m) === 'hello').id;
    if (history) {
      assert.deepEqual(outcomes.filter((o) => o.type === 'data-queue').map((o) => [o.data.outcome, o.data.messageId, o.data.position]), [['queued', queuedId, 1]]);
    }
    const answer = chat.messages.find((m) => m.role === 'assistant' && texts(m) === 'You said: hello');
    assert.ok(answer, 'the queued message is answered: ' + JSON.stringify(chat.messages.map((m) => [m.role, texts(m)])));
    if (!history) return chat;
    const reply = chat.messages.find((m) => m.id === replyId);
    assert.equal(texts(reply), 'done', 'the reply it waited for finished undisturbed');
    const stored = await (await cookieFetch(`${base}/api/chat/${chat.id}`)).json();
    assert.deepEqual(stored.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
    assert.deepEqual([stored[1].id, stored[2].id, stored[3].id], [replyId, queuedId, answer.id], 'stored in order, under the ids the client holds');
    assert.deepEqual(await (await cookieFetch(`${base}/api/chat/${chat.id}/queue`)).json(), { queued: [] });
    return chat;
  },
  // AI SDK 7's experimental_queue keeps a message sent while a reply runs
  // in the browser and sends it when the reply ends: the server takes it
  // at once (the chat is let go before the client reads the reply's end).
  async browserQueue() {
    if (!aiVersion.startsWith('7.')) return flows.chat();
    const chat = newChat({ experimental_queue: true });
    const first = chat.sendMessage({ text: 'think: wait 500 ms' });
    await until(() => assistant(chat)?.parts.some((p) => p.type === 'reasoning'), 'the reasoning');
    await chat.sendMessage({ text: 'hello' }); // resolves once queued
    assert.equal(chat.experimental_queuedMessages.length, 1, 'queued in the browser');
    await first;
    await until(() => chat.experimental_queuedMessages.length === 0 && chat.messages.length === 4 && chat.status === 'ready', 'the queued message to be answered');
    await settled(chat);
    assert.equal(chat.error, undefined, String(chat.error));
    assert.deepEqual(chat.messages.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
    assert.equal(texts(chat.messages[1]), 'done');
    assert.equal(texts(chat.messages[3]), 'You said: hello');
    return chat;
  },
  // A message sent with busy "interrupt" while the reply runs: the reply
  // is stopped, as Stop does, and the message is answered at once.
  async interrupt() {
    const chat = newChat();
    const first = chat.sendMessage({ text: 'think: wait 5000 ms' });
    await until(() => assistant(chat)?.parts.some((p) => p.type === 'reasoning' && p.text.endsWith('ms')), 'the reasoning');
    const replyId = assistant(chat).id;
    const started = Date.now();
    await chat.sendMessage({ text: 'hello' }, { body: { busy: 'interrupt' } });
    await first;
    await settled(chat);
    assert.equal(chat.error, undefined, String(chat.error));
    assert.deepEqual(chat.messages.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
    assert.equal(texts(chat.messages[3]), 'You said: hello');
    if (!history) return chat;
    assert.ok(Date.now() - started < 4000, 'answered without waiting for the interrupted reply');
    const stored = await (await cookieFetch(`${base}/api/chat/${chat.id}`)).json();
    assert.deepEqual(stored.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
    assert.equal(stored[1].id, replyId);
    assert.equal(texts(stored[1]), '', 'the interrupted reply was not finished in the background');
    return chat;
  },
  // Two resumes of one chat at once, as React StrictMode's double mount
  // makes them (ai#13863): the server serves both (a run has any number
  // of readers), and the client keeps the later one; the reply shows once,
  // whole, with no error.
  async concurrentResumes() {
    if (!history) {
      const res = await cookieFetch(`${base}/api/chat/anything/stream`);
      assert.equal(res.status, 404, 'a server without history has no runs to resume');
      const chat = newChat();
      await chat.sendMessage({ text: 'hello' });
      await settled(chat);
      return chat;
    }
    const chat = newChat();
    const sent = chat.sendMessage({ text: 'think: wait 2000 ms' });
    await until(() => assistant(chat)?.parts.some((p) => p.type === 'reasoning' && p.text.endsWith('ms')), 'the reasoning');
    await chat.stop(); // the page goes away
    await sent;
    const stored = await (await cookieFetch(`${base}/api/chat/${chat.id}`)).json();
    const reloaded = new Chat({ id: chat.id, messages: stored, transport: new DefaultChatTransport({ api: base + '/api/chat', fetch: checkingFetch }) });
    await Promise.all([reloaded.resumeStream(), reloaded.resumeStream()]);
    await settled(reloaded);
    assert.equal(reloaded.status, 'ready', String(reloaded.error));
    assert.equal(reloaded.error, undefined);
    assert.deepEqual(reloaded.messages.map((m) => m.role), ['user', 'assistant']);
    assert.deepEqual(assistant(reloaded).parts.map((p) => p.type), ['step-start', 'reasoning', 'text'], 'each part once');
    assert.equal(texts(assistant(reloaded)), 'done');
    return reloaded;
  },
  // A network drop mid-reply, the page still open (ai#14688): AI SDK 7's
  // Chat keeps the partial reply and resumes it (what useChat does when
  // the browser is back online); the server replays the run from its
  // start, and the client, told the transport's resume is a replay,
  // starts the message again: each part shows once. AI SDK 6 does not
  // resume in the page; a reload loads the chat without the running reply
  // and resumes it (the resume flow).
  async resumeAfterDrop() {
    if (!history || !aiVersion.startsWith('7.')) return flows.resume();
    let dropped = false;
    const droppingFetch = async (url, init) => {
      const res = await checkingFetch(url, init);
      if (dropped || init?.method !== 'POST' || !res.body) return res;
      dropped = true;
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let seen = '';
      const body = new ReadableStream({
        async pull(c) {
          if (seen.includes('ms"}')) { // the reasoning so far: the reply waits now
            // Once the page shows it, the connection drops.
            await until(() => assistant(chat)?.parts.some((p) => p.type === 'reasoning' && p.text.endsWith('ms')), 'the partial reply');
            reader.cancel().catch(() => {});
            c.error(new TypeError('network error')); // as a dropped connection fails a fetch body
            return;
          }
          const { value, done } = await reader.read();
          if (done) return c.close();
          seen += decoder.decode(value, { stream: true });
          c.enqueue(value);
        },
      });
      return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
    };
    const chat = newChat({ transport: new DefaultChatTransport({ api: base + '/api/chat', fetch: droppingFetch }) });
    await chat.sendMessage({ text: 'think: wait 2000 ms' });
    assert.equal(chat.status, 'error', 'the drop fails the request');
    assert.ok(assistant(chat)?.parts.some((p) => p.type === 'reasoning'), 'the partial reply is shown');
    await chat['~resumeStreamIfDisconnected']();
    await settled(chat);
    assert.equal(chat.status, 'ready', String(chat.error));
    assert.deepEqual(chat.messages.map((m) => m.role), ['user', 'assistant']);
    const reply = assistant(chat);
    assert.deepEqual(reply.parts.map((p) => p.type), ['step-start', 'reasoning', 'text'], 'each part once');
    assert.equal(reply.parts[1].text, 'Thinking about: think: wait 2000 ms');
    assert.equal(texts(reply), 'done');
    return chat;
  },
  // A reload mid-reply: the first Chat's fetch is cut (the run goes on);
  // a new Chat with the stored messages resumes the stream (what
  // useChat({resume: true}) does on mount) and shows the whole reply
  // once; a second resume finds no run (204) and changes nothing.
  async resume() {
    if (!history) {
      const res = await cookieFetch(`${base}/api/chat/anything/stream`);
      assert.equal(res.status, 404, 'a server without history has no runs to resume');
      const chat = newChat();
      await chat.sendMessage({ text: 'hello' });
      await settled(chat);
      return chat;
    }
    const chat = newChat();
    // Long enough that the reply is still going when a loaded machine gets to look.
    const sent = chat.sendMessage({ text: 'think: wait 4000 ms' });
    await until(() => assistant(chat)?.parts.some((p) => p.type === 'reasoning' && p.text.endsWith('ms')), 'the reasoning');
    await chat.stop(); // the page goes away
    await sent;
    const stored = await (await cookieFetch(`${base}/api/chat/${chat.id}`)).json();
    assert.deepEqual(stored.map((m) => m.role), ['user'], 'the reply is not stored yet');
    const reloaded = new Chat({
      id: chat.id,
      messages: stored,
      transport: new DefaultChatTransport({ api: base + '/api/chat', fetch: checkingFetch }),
    });
    await reloaded.resumeStream();
    await settled(reloaded);
    assert.equal(reloaded.status, 'ready', String(reloaded.error));
    assert.deepEqual(reloaded.messages.map((m) => m.role), ['user', 'assistant']);
    const reply = assistant(reloaded);
    assert.deepEqual(reply.parts.map((p) => p.type), ['step-start', 'reasoning', 'text'], 'each part once');
    assert.equal(reply.parts[1].text, 'Thinking about: think: wait 4000 ms');
    assert.equal(texts(reply), 'done');
    const again = await cookieFetch(`${base}/api/chat/${chat.id}/stream`);
    assert.equal(again.status, 204, 'no run to resume once it is over');
    await reloaded.resumeStream();
    assert.equal(reloaded.status, 'ready');
    assert.equal(reloaded.messages.length, 2);
    // The stored reply is the one that streamed, under the same id.
    const after = await (await cookieFetch(`${base}/api/chat/${chat.id}`)).json();
    assert.equal(after.at(-1).id, reply.id);
    return reloaded;
  },
  // A reload while a continuation runs (the reply after an approval; the
  // server's demo model pauses between words): useChat starts a resumed
  // message empty, so the resumed stream must carry what the continued
  // message held before it (the approved call) as well as what the
  // continuation adds, each once.
  async resumeContinuation() {
    const chat = newChat({ sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
    await chat.sendMessage({ text: 'delete /tmp/slow.txt' });
    await settled(chat);
    const asked = toolPart(assistant(chat), 'delete_file');
    assert.equal(asked.state, 'approval-requested');
    const id = assistant(chat).id;
    await chat.addToolApprovalResponse({ id: asked.approval.id, approved: true });
    await until(() => texts(assistant(chat)).startsWith('Deleted'), 'the continuation to start');
    await chat.stop(); // the page goes away; the run goes on
    const stored = await (await cookieFetch(`${base}/api/chat/${chat.id}`)).json();
    assert.equal(toolPart(stored.at(-1), 'delete_file').state, 'approval-requested', 'the continuation is not stored yet');
    const reloaded = new Chat({
      id: chat.id,
      messages: stored,
      transport: new DefaultChatTransport({ api: base + '/api/chat', fetch: checkingFetch }),
    });
    const resumed = flow().checks.length;
    await reloaded.resumeStream();
    await settled(reloaded);
    assert.equal(flow().checks.length, resumed + 1, 'the continuation was resumed, not found over');
    assert.equal(reloaded.status, 'ready', String(reloaded.error));
    assert.deepEqual(reloaded.messages.map((m) => m.role), ['user', 'assistant']);
    const m = assistant(reloaded);
    assert.equal(m.id, id);
    assert.deepEqual(m.parts.map((p) => p.type), ['step-start', 'tool-delete_file', 'step-start', 'text'], 'each part once');
    assert.equal(toolPart(m, 'delete_file').state, 'output-available');
    assert.deepEqual(toolPart(m, 'delete_file').output, { deleted: '/tmp/slow.txt' });
    assert.equal(texts(m), 'Deleted /tmp/slow.txt.');
    return reloaded;
  },
};

await runFlows(names.split(','), async (name, state) => {
  const run = flows[name];
  if (!run) throw new Error('unknown flow ' + name);
  const chat = await run();
  const results = await Promise.all(state.checks);
  // readUIMessageStream reports what it cannot process to onError rather
  // than throwing: only the error flow may see any.
  if (name !== 'modelError') {
    results.forEach((r, i) => assert.deepEqual(r.errors.map(String), [], `response ${i + 1}: readUIMessageStream errors`));
  }
  // What the chat holds is valid by the SDK's own message validation.
  await validateUIMessages({ messages: chat.messages });
  return { ai: aiVersion, node: process.version, responses: results.length, chunks: results.reduce((n, r) => n + r.chunks.length, 0) };
});
