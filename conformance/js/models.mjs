// Chats on agentui's native models (Anthropic, OpenAI Responses, Gemini),
// each answered by its provider's validating fake (conformance/native_test.go
// starts them and the server), driven by the real clients: useChat's Chat
// class and AG-UI's HttpAgent. The fakes refuse a request whose replayed
// signatures, thought signatures or reasoning items are missing, altered,
// moved or from another model, so a chat that goes on passed.
//
//   node models.mjs <base-url> <flow>...
//
// Flows run concurrently: vercel:<provider>, agui:<provider> (four turns
// with thinking, a tool that runs and one that waits for approval),
// vercelSwitch, aguiSwitch (a chat that changes model within a provider
// and across them, an approval's continuation included), and the halves
// of a chat cut by a server restart: vercelBefore:<provider>,
// vercelAfter:<provider>, aguiBefore:<provider>, aguiAfter:<provider>.
//
// MODELS is {provider: [model, another model of that provider]}; TAG
// starts every user message (the Go test finds a flow's requests by it)
// and names the restart flows' chats; BASE2 is a second replica: each
// chat's requests alternate between the two; AISDK7=1: the server speaks
// to AI SDK 7; HISTORY=1: it keeps history (HISTORY=0: it keeps none, and
// the only provider values that may reach the client are the ones the
// server sealed); COOKIE_FILE keeps the scope cookie across processes.
//
// The same script runs with AI SDK 7 on Node 22 through the symlink in
// js7/ (useChat flows only: js7 has no AG-UI client). Prints a JSON
// summary and exits 0, or prints the failure and exits 1.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Chat } from '@ai-sdk/react';
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai';
import { cookieFetch, history } from './cookies.mjs';

const [base, ...flowNames] = process.argv.slice(2);
const models = JSON.parse(process.env.MODELS);
const TAG = process.env.TAG;
const base2 = process.env.BASE2;
const v7 = process.env.AISDK7 === '1';
const stateless = process.env.HISTORY === '0';
const aiVersion = JSON.parse(readFileSync(new URL('../package.json', import.meta.resolve('ai')), 'utf8')).version;
const agui = flowNames.some((f) => f.startsWith('agui'))
  ? { ...(await import('@ag-ui/client')), ...(await import('@ag-ui/core/schemas')), ...(await import('../../webui/app/src/agentuiAgent.js')) }
  : null;

const randomId = (kind) => `${kind}-${Math.random().toString(36).slice(2)}`;
const idOf = (spec) => spec.slice(spec.indexOf(':') + 1);

async function until(cond, what, ms = 15000) {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for ' + what);
    await new Promise((r) => setTimeout(r, 10));
  }
}

// replicaFetch sends each chat's requests to the replicas in turn (with
// BASE2), so every turn and continuation is served by the other replica
// than the one before.
const sent = new Map();
const served = { first: 0, second: 0 }; // requests per replica
function replicaFetch(input, init = {}) {
  let url = String(input);
  if (base2 && init.body) {
    const body = JSON.parse(init.body);
    const chat = body.threadId ?? body.id;
    const n = sent.get(chat) ?? 0;
    sent.set(chat, n + 1);
    if (n % 2 === 1) url = base2 + url.slice(base.length);
  }
  served[url.startsWith(base2 ?? '\0') ? 'second' : 'first']++;
  return cookieFetch(url, init);
}

// modelOf checks that a reply names the model that answered: the id the
// request asked for (OpenAI answers with a dated snapshot of it).
function assertModel(model, spec) {
  const id = idOf(spec);
  assert.ok(model === id || model?.startsWith(id + '-'), `the reply names model ${model}, want ${id}`);
}

// cacheOf reads the prompt cache's tokens from useChat metadata usage, in
// the shape of the client's SDK version.
function cacheOf(usage) {
  if (v7) {
    assert.equal(usage.cachedInputTokens, undefined, 'AI SDK 7 has no top-level cachedInputTokens');
    return { read: usage.inputTokenDetails.cacheReadTokens, write: usage.inputTokenDetails.cacheWriteTokens };
  }
  return { read: usage.cachedInputTokens ?? 0, write: usage.inputTokenDetails?.cacheWriteTokens ?? 0 };
}

// assertCached: on Anthropic a turn after the first reads the prefix an
// earlier one wrote to the prompt cache (instructions, tools, history) and
// writes what the last turn added (the server's cache breakpoints), and
// the reply's usage says so. (conformance/native_test.go checks the
// numbers against what the fake billed.)
function assertCached(provider, cache, usage) {
  if (provider !== 'anthropic') return;
  assert.ok(cache.read > 0 && cache.write > 0, 'the usage shows cache reads and writes: ' + JSON.stringify(usage));
}

// VercelChat is a useChat conversation whose next request names a model
// (the request body's "model", as the chat page's picker sets it).
class VercelChat {
  constructor(id = randomId('vercel'), messages) {
    this.model = undefined;
    this.chat = new Chat({
      id,
      messages,
      transport: new DefaultChatTransport({ api: base + '/api/chat', fetch: replicaFetch, body: () => ({ model: this.model }) }),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });
  }

  last() {
    return this.chat.messages.filter((m) => m.role === 'assistant').at(-1);
  }

  async say(model, text) {
    this.model = model;
    await this.chat.sendMessage({ text });
    await until(() => this.chat.status === 'ready' || this.chat.status === 'error', 'the reply');
    assert.equal(this.chat.status, 'ready', `"${text}" on ${model} failed: ${this.chat.error?.message}`);
    return this.check(model);
  }

  // approve answers the pending delete_file approval; its continuation
  // goes to model.
  async approve(model, approved = true) {
    this.model = model;
    const asked = this.last().parts.find((p) => p.type === 'tool-delete_file' && p.state === 'approval-requested');
    assert.ok(asked, 'a delete_file call waits for approval');
    await this.chat.addToolApprovalResponse({ id: asked.approval.id, approved });
    await until(() => this.chat.status === 'error' || (this.chat.status === 'ready' && /^Done/.test(lastText(this.last()))), 'the continuation');
    assert.equal(this.chat.status, 'ready', `the continuation on ${model} failed: ${this.chat.error?.message}`);
    return this.check(model);
  }

  // check: the reply shows its reasoning, names its model and usage, and
  // carries no provider value.
  check(model) {
    const m = this.last();
    assert.ok(m.parts.some((p) => p.type === 'reasoning' && p.text.length > 0), 'the reply shows its reasoning: ' + JSON.stringify(m.parts));
    assertModel(m.metadata?.model, model);
    assert.ok(m.metadata.usage.inputTokens > 0 && m.metadata.usage.outputTokens > 0, 'usage: ' + JSON.stringify(m.metadata.usage));
    assert.ok(m.parts.every((p) => onlySealed(p.providerMetadata) && onlySealed(p.callProviderMetadata)), 'no provider values reach the client: ' + JSON.stringify(m.parts));
    return m;
  }
}

// onlySealed: a part's provider metadata is absent or, without history,
// only the value the server sealed for it (opaque to the client).
const onlySealed = (meta) =>
  meta === undefined ||
  (stateless && Object.keys(meta).length === 1 && Object.keys(meta.agentui ?? {}).join() === 'sealed');

const lastText = (m) => m.parts.filter((p) => p.type === 'text').at(-1)?.text ?? '';
const tool = (m, name) => m.parts.find((p) => p.type === 'tool-' + name);

// AguiChat is an AG-UI thread whose runs name a model
// (forwardedProps.model). Every response is also read raw: each event
// valid by @ag-ui/core's schema with no unknown keys.
class AguiChat {
  constructor(threadId = randomId('agui')) {
    this.runs = [];
    const Agent = agui.agentuiAgent(agui);
    this.agent = new Agent({ url: base + '/api/agui', threadId, fetch: (input, init) => this.fetch(input, init) });
  }

  async fetch(input, init) {
    const res = await replicaFetch(input, init);
    if (!res.ok || !res.body) return res;
    const [forClient, forCheck] = res.body.tee();
    const events = readEvents(forCheck);
    events.catch(() => {});
    this.runs.push(events);
    return new Response(forClient, { status: res.status, statusText: res.statusText, headers: res.headers });
  }

  async run(model, params = {}) {
    this.model = model;
    await this.agent.runAgent({ ...params, forwardedProps: { model } });
    const events = await this.runs.at(-1);
    const fin = events.at(-1);
    assert.equal(fin.type, 'RUN_FINISHED', 'the run finished: ' + JSON.stringify(fin));
    assert.ok(events.some((e) => e.type === 'REASONING_MESSAGE_CONTENT' && e.delta.length > 0), 'the run shows reasoning');
    assert.equal(fin.usage.length, 1);
    assertModel(fin.usage[0].model, model);
    assert.ok(fin.usage[0].inputTokens > 0 && fin.usage[0].outputTokens > 0);
    this.interrupt = fin.outcome?.type === 'interrupt' ? fin.outcome.interrupts[0] : undefined;
    return events;
  }

  say(model, text) {
    this.agent.messages = [...this.agent.messages, { id: randomId('u'), role: 'user', content: text }];
    return this.run(model);
  }

  // answer resolves the pending interrupt; the run goes to model.
  answer(model, payload) {
    assert.ok(this.interrupt, 'an interrupt is pending');
    return this.run(model, { resume: [{ interruptId: this.interrupt.id, status: 'resolved', payload }] });
  }

  lastText() {
    return this.agent.messages.filter((m) => m.role === 'assistant' && m.content).at(-1)?.content ?? '';
  }
}

async function readEvents(body) {
  const text = await new Response(body).text();
  const events = [];
  for (let frame of text.split('\n\n')) {
    if (frame === '') continue;
    frame = frame.replace(/^id: \d+\n/, '');
    const raw = frame.slice('data: '.length);
    const event = JSON.parse(raw);
    const parsed = agui.EventSchema.safeParse(event);
    if (!parsed.success) throw new Error(`EventSchema rejects ${raw}: ${parsed.error}`);
    assert.equal(Object.keys(parsed.data).length, Object.keys(event).length, 'no unknown keys: ' + raw);
    // Without history a step's provider values travel sealed, in
    // REASONING_ENCRYPTED_VALUE events only.
    assert.ok(!raw.includes('encryptedValue') || (stateless && event.type === 'REASONING_ENCRYPTED_VALUE'), 'no provider values reach the client: ' + raw);
    events.push(event);
  }
  return events;
}

// vercelTurns: four turns on the provider's first model. The replies'
// "turn N" counts the user messages the model got: the whole history.
async function vercelTurns(provider) {
  const [spec] = models[provider];
  const tag = `[${TAG}/vercel:${provider}]`;
  const c = new VercelChat();
  let m = await c.say(spec, `${tag} hello`);
  assert.equal(lastText(m), `Reply 1: ${tag} hello`);
  m = await c.say(spec, `${tag} what is the weather?`);
  assert.equal(tool(m, 'get_weather').state, 'output-available');
  assert.equal(tool(m, 'get_weather').output.city, 'Paris');
  assert.match(lastText(m), /^Done \(turn 2\): .*sunny/);
  assertCached(provider, cacheOf(m.metadata.usage), m.metadata.usage);
  m = await c.say(spec, `${tag} delete /tmp/x.txt`);
  assert.equal(tool(m, 'delete_file').state, 'approval-requested');
  assert.equal(lastText(m), 'I will delete /tmp/x.txt.');
  m = await c.approve(spec);
  assert.equal(tool(m, 'delete_file').state, 'output-available');
  assert.deepEqual(tool(m, 'delete_file').output, { deleted: '/tmp/x.txt' });
  assert.match(lastText(m), /^Done \(turn 3\): .*deleted/);
  m = await c.say(spec, `${tag} bye`);
  assert.equal(lastText(m), `Reply 4: ${tag} bye`);
  assertCached(provider, cacheOf(m.metadata.usage), m.metadata.usage);
  if (history) {
    const stored = await (await cookieFetch(`${base}/api/chat/${c.chat.id}`)).json();
    assert.equal(stored.length, c.chat.messages.length, 'the stored conversation has every message');
    assert.deepEqual(stored.at(-1).metadata, m.metadata, 'the reloaded reply has the same metadata');
    assert.ok(!JSON.stringify(stored).includes('providerMetadata'), 'no provider values in the stored conversation a client gets');
  }
  return { usage: m.metadata.usage };
}

// aguiTurns: four turns on the provider's first model; the approval is
// denied with a reason, which reaches the model.
async function aguiTurns(provider) {
  const [spec] = models[provider];
  const tag = `[${TAG}/agui:${provider}]`;
  const c = new AguiChat();
  await c.say(spec, `${tag} hello`);
  assert.equal(c.lastText(), `Reply 1: ${tag} hello`);
  assert.ok(c.agent.messages.some((m) => m.role === 'reasoning' && m.content), 'the client keeps the reasoning');
  let events = await c.say(spec, `${tag} what is the weather?`);
  assert.match(events.find((e) => e.type === 'TOOL_CALL_RESULT').content, /sunny/);
  assert.match(c.lastText(), /^Done \(turn 2\): .*sunny/);
  let usage = events.at(-1).usage[0];
  assertCached(provider, { read: usage.cachedInputTokens, write: usage.cacheWriteInputTokens }, usage);
  events = await c.say(spec, `${tag} delete /tmp/x.txt`);
  assert.equal(c.interrupt?.reason, 'tool_call');
  events = await c.answer(spec, { approved: false, reason: 'not today' });
  assert.match(events.find((e) => e.type === 'TOOL_CALL_RESULT').content, /denied.*not today/);
  assert.match(c.lastText(), /^Done \(turn 3\): .*not today/);
  events = await c.say(spec, `${tag} bye`);
  assert.equal(c.lastText(), `Reply 4: ${tag} bye`);
  usage = events.at(-1).usage[0];
  assertCached(provider, { read: usage.cachedInputTokens, write: usage.cacheWriteInputTokens }, usage);
  return { usage };
}

// The switch flows: one chat on six models. An approval's continuation
// goes to another model than the call's (same provider, then another
// provider), and the chat comes back to models it used before, whose own
// values are sent again. conformance/native_test.go checks what each
// request carried.
async function vercelSwitch() {
  const [A1, A2] = models.anthropic, [R1, R2] = models.responses, [G1, G2] = models.gemini;
  const tag = `[${TAG}/vercelSwitch]`;
  const c = new VercelChat();
  let m = await c.say(A1, `${tag} delete /tmp/s1.txt`);
  assert.equal(tool(m, 'delete_file').state, 'approval-requested');
  m = await c.approve(A2);
  assert.match(lastText(m), /^Done \(turn 1\): .*deleted/);
  m = await c.say(G1, `${tag} what is the weather?`);
  assert.match(lastText(m), /^Done \(turn 2\): .*sunny/);
  m = await c.say(G2, `${tag} hello`);
  assert.equal(lastText(m), `Reply 3: ${tag} hello`);
  m = await c.say(R1, `${tag} delete /tmp/s2.txt`);
  assert.equal(tool(m, 'delete_file').state, 'approval-requested');
  m = await c.approve(G1);
  assert.match(lastText(m), /^Done \(turn 4\): .*deleted/);
  let n = 5;
  for (const spec of [R2, A1, R1, G1]) {
    m = await c.say(spec, `${tag} hello`);
    assert.equal(lastText(m), `Reply ${n++}: ${tag} hello`);
  }
  return { messages: c.chat.messages.length };
}

async function aguiSwitch() {
  const [A1, A2] = models.anthropic, [R1, R2] = models.responses, [G1, G2] = models.gemini;
  const tag = `[${TAG}/aguiSwitch]`;
  const c = new AguiChat();
  await c.say(A1, `${tag} delete /tmp/s1.txt`);
  assert.ok(c.interrupt);
  await c.answer(A2, { approved: true });
  assert.match(c.lastText(), /^Done \(turn 1\): .*deleted/);
  await c.say(G1, `${tag} what is the weather?`);
  assert.match(c.lastText(), /^Done \(turn 2\): .*sunny/);
  await c.say(G2, `${tag} hello`);
  assert.equal(c.lastText(), `Reply 3: ${tag} hello`);
  await c.say(R1, `${tag} delete /tmp/s2.txt`);
  assert.ok(c.interrupt);
  await c.answer(G1, { approved: true });
  assert.match(c.lastText(), /^Done \(turn 4\): .*deleted/);
  let n = 5;
  for (const spec of [R2, A1, R1, G1]) {
    await c.say(spec, `${tag} hello`);
    assert.equal(c.lastText(), `Reply ${n++}: ${tag} hello`);
  }
  return { messages: c.agent.messages.length };
}

// The restart flows: before, a turn and a call that waits for approval;
// after (a new server process on the same Redis), the page reloads the
// chat from the server, approves, and the chat goes on. The continuation
// replays the values stored before the restart.
const restartID = (proto, provider) => `${TAG}-${proto}-${provider}`;

async function vercelBefore(provider) {
  const [spec] = models[provider];
  const tag = `[${TAG}/vercelRestart:${provider}]`;
  const c = new VercelChat(restartID('vercel', provider));
  await c.say(spec, `${tag} hello`);
  const m = await c.say(spec, `${tag} delete /tmp/r.txt`);
  assert.equal(tool(m, 'delete_file').state, 'approval-requested');
}

async function vercelAfter(provider) {
  const [spec] = models[provider];
  const tag = `[${TAG}/vercelRestart:${provider}]`;
  const id = restartID('vercel', provider);
  const stored = await (await cookieFetch(`${base}/api/chat/${id}`)).json();
  assert.equal(stored.length, 4, 'the stored conversation survived the restart');
  const c = new VercelChat(id, stored);
  let m = await c.approve(spec);
  assert.match(lastText(m), /^Done \(turn 2\): .*deleted/);
  m = await c.say(spec, `${tag} hello again`);
  assert.equal(lastText(m), `Reply 3: ${tag} hello again`);
}

async function aguiBefore(provider) {
  const [spec] = models[provider];
  const tag = `[${TAG}/aguiRestart:${provider}]`;
  const c = new AguiChat(restartID('agui', provider));
  await c.say(spec, `${tag} hello`);
  await c.say(spec, `${tag} delete /tmp/r.txt`);
  assert.ok(c.interrupt);
}

async function aguiAfter(provider) {
  const [spec] = models[provider];
  const tag = `[${TAG}/aguiRestart:${provider}]`;
  const c = new AguiChat(restartID('agui', provider));
  // A reloaded page connects: the stored thread and its open interrupt.
  await c.agent.connectAgent();
  const fin = (await c.runs.at(-1)).at(-1);
  assert.equal(fin.outcome?.type, 'interrupt', 'the interrupt survived the restart');
  c.interrupt = fin.outcome.interrupts[0];
  await c.answer(spec, { approved: true });
  assert.match(c.lastText(), /^Done \(turn 2\): .*deleted/);
  await c.say(spec, `${tag} hello again`);
  assert.equal(c.lastText(), `Reply 3: ${tag} hello again`);
}

// The scope cookie comes first, once: concurrent first requests would
// each start a scope of their own.
await cookieFetch(base + '/healthz');

const flows = { vercel: vercelTurns, agui: aguiTurns, vercelSwitch, aguiSwitch, vercelBefore, vercelAfter, aguiBefore, aguiAfter };

const results = await Promise.allSettled(
  flowNames.map(async (name) => {
    const [flow, provider] = name.split(':');
    if (!flows[flow]) throw new Error('unknown flow ' + name);
    if (provider && !models[provider]) throw new Error('unknown provider ' + name);
    return [name, (await flows[flow](provider)) ?? 'ok'];
  }),
);
const failed = results.map((r, i) => [flowNames[i], r]).filter(([, r]) => r.status === 'rejected');
for (const [name, r] of failed) console.error(`flow ${name} failed:`, r.reason?.stack ?? r.reason);
if (failed.length) process.exit(1);
console.log(JSON.stringify({ ai: aiVersion, node: process.version, served, flows: Object.fromEntries(results.map((r) => r.value)) }));
process.exit(0);
