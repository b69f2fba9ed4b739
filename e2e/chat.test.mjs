// The browser test of the embedded chat page: it starts the agentui binary
// (demo model) on a free loopback port, drives the page in Debian's
// Chromium with playwright-core, and stops the server.
//
//   AGENTUI_BIN=/path/to/agentui node e2e/chat.test.mjs     (make e2e does this)
//
// It covers both protocols the page speaks: the Vercel AI SDK UI message
// stream (useChat) and AG-UI (HttpAgent). Any console error or warning and
// any uncaught page error fails the test that caused it. Screenshots go to
// test-output/e2e/ at the repository root.
//
// Without Chromium (CHROMIUM, default /usr/bin/chromium) the test is skipped
// with exit 0, except under CI (CI set), where it fails: CI must not skip.
import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { executable, launch, requireChromium, start, stop, watch } from './harness.mjs';

const BIN = process.env.AGENTUI_BIN;
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'test-output', 'e2e');

requireChromium('e2e');
if (!BIN || !executable(BIN)) {
  console.error('e2e: set AGENTUI_BIN to a built agentui binary (make e2e does).');
  process.exit(2);
}

// ---------------------------------------------------------------- fixtures

let server; // { proc, url, log() }
let browser; // { context, close() }
let context;
let page;
const problems = []; // console errors and warnings, page errors
let shots = 0;

const startServer = () => start(BIN, ['-addr', '127.0.0.1:0', '-demo-delay', '10ms']);
const stopServer = () => stop(server);

before(async () => {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  server = await startServer();
  browser = await launch({
    // The page answers get_location from the browser's time zone.
    timezoneId: 'Europe/Paris',
    locale: 'en-US',
    viewport: { width: 1100, height: 800 },
    // Copy writes the clipboard; the test reads it back.
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  context = browser.context;
  context.setDefaultTimeout(10000);
  page = context.pages()[0] ?? (await context.newPage());
  watch(page, problems);
});

after(async () => {
  await browser?.close();
  await stopServer();
});

afterEach(() => {
  const found = problems.splice(0);
  assert.deepEqual(found, [], 'the page logged errors or warnings');
});

// ----------------------------------------------------------------- helpers

async function shot(name) {
  shots++;
  await page.screenshot({ path: join(OUT, `${String(shots).padStart(2, '0')}-${name}.png`) });
}

const input = () => page.getByTestId('input');
const composer = () => page.getByTestId('composer');
const assistants = () => page.locator('[data-testid=message][data-role=assistant]');
const lastAssistant = () => assistants().last();
const lastText = () => lastAssistant().getByTestId('text').last();
const tools = (name) => page.locator(`[data-testid=tool][data-tool-name="${name}"]`);

async function send(text) {
  await input().fill(text);
  await input().press('Enter');
  // The user's message shows at once.
  await page.locator('[data-testid=message][data-role=user]').last().filter({ hasText: text }).waitFor();
}

// settled waits until no reply is in progress (Send is back), for at most
// timeout ms (the default timeout when not given).
async function settled(timeout) {
  await page.getByTestId('send').waitFor({ timeout });
  await page.locator('[data-testid=composer][data-status=streaming], [data-testid=composer][data-status=submitted]').waitFor({ state: 'detached', timeout });
}

async function expectReply(text) {
  await lastText().filter({ hasText: text }).waitFor();
  await settled();
  assert.equal((await lastText().textContent()).trim(), text);
}

async function state(tool) {
  return tool.getAttribute('data-state');
}

// watchText records every value the last assistant message's text takes,
// to show that a reply streams rather than arrives whole.
async function watchText() {
  await page.evaluate(() => {
    window.__seenTexts = [];
    window.__textObserver?.disconnect();
    window.__textObserver = new MutationObserver(() => {
      const msgs = document.querySelectorAll('[data-testid=message][data-role=assistant]');
      const texts = msgs[msgs.length - 1]?.querySelectorAll('[data-testid=text]');
      const t = texts?.[texts.length - 1]?.textContent;
      if (t && window.__seenTexts.at(-1) !== t) window.__seenTexts.push(t);
    });
    window.__textObserver.observe(document.body, { subtree: true, childList: true, characterData: true });
  });
}

async function seenTexts() {
  return page.evaluate(() => {
    window.__textObserver?.disconnect();
    return window.__seenTexts;
  });
}

function assertStreamed(seen, final) {
  const partials = seen.filter((t) => t.length < final.length && final.startsWith(t));
  assert.ok(partials.length >= 3, `the reply grew word by word (saw ${JSON.stringify(seen)})`);
  assert.equal(seen.at(-1), final);
}

// stored reads the chat's stored conversation from the server.
async function stored() {
  const id = new URL(page.url()).searchParams.get('chat');
  return page.evaluate(async (id) => (await fetch('/api/chat/' + encodeURIComponent(id))).json(), id);
}

const LONG = 'tell me a long story about a cat who lived in Paris and loved to stream words one by one across the wire';

// ------------------------------------------------------------------- tests

test('the page loads with a chat id in the URL', async () => {
  await page.goto(server.url + '/');
  await page.getByTestId('app').waitFor();
  await page.getByTestId('empty').waitFor();
  const url = new URL(page.url());
  assert.match(url.searchParams.get('chat') ?? '', /^[A-Za-z0-9_-]+$/);
  assert.equal(await page.getByTestId('protocol-switch').inputValue(), 'vercel');
  assert.equal(await page.getByTestId('app').getAttribute('data-chat-id'), url.searchParams.get('chat'));
  await shot('loaded');
});

test('useChat: a reply streams in word by word', async () => {
  await watchText();
  await send(LONG);
  await expectReply('You said: ' + LONG);
  assertStreamed(await seenTexts(), 'You said: ' + LONG);
});

test('useChat: reasoning shows in a collapsible part', async () => {
  await send('think about cats');
  await expectReply('You said: think about cats');
  const reasoning = lastAssistant().getByTestId('reasoning');
  assert.equal(await reasoning.evaluate((el) => el.tagName), 'DETAILS');
  assert.match(await reasoning.textContent(), /Thinking about: think about cats/);
});

test('useChat: a server tool call shows its input and output', async () => {
  await send('weather in Paris');
  await expectReply('The weather in Paris is sunny, 21°C.');
  const tool = lastAssistant().locator('[data-testid=tool][data-tool-name=get_weather]');
  assert.equal(await state(tool), 'output-available');
  assert.match(await tool.textContent(), /Paris/);
  assert.match(await tool.getByTestId('tool-output').textContent(), /sunny/);
  await shot('server-tool');
});

test('useChat: an approved tool call runs', async () => {
  await send('delete /tmp/x.txt');
  const tool = lastAssistant().locator('[data-testid=tool][data-tool-name=delete_file]');
  await tool.and(page.locator('[data-state=approval-requested]')).waitFor();
  await settled();
  await shot('approval-requested');
  await tool.getByTestId('approve').click();
  await expectReply('Deleted /tmp/x.txt.');
  assert.equal(await state(tool), 'output-available');
  assert.match(await tool.getByTestId('tool-output').textContent(), /\/tmp\/x\.txt/);
  assert.equal(await page.getByTestId('approve').count(), 0, 'no approval left open');
});

test('useChat: a denied tool call does not run', async () => {
  await send('delete /tmp/keep.txt');
  const tool = lastAssistant().locator('[data-testid=tool][data-tool-name=delete_file]');
  await tool.and(page.locator('[data-state=approval-requested]')).waitFor();
  await tool.getByTestId('deny').click();
  await lastText().filter({ hasText: 'did not delete' }).waitFor();
  await settled();
  assert.match(await lastText().textContent(), /^Okay, I did not delete \/tmp\/keep\.txt/);
  assert.equal(await state(tool), 'output-denied');
  await shot('approval-denied');
});

test('useChat: the page answers the get_location client tool', async () => {
  await send('where am I');
  await expectReply('You are in Paris.');
  const tool = lastAssistant().locator('[data-testid=tool][data-tool-name=get_location]');
  assert.equal(await state(tool), 'output-available');
  assert.match(await tool.getByTestId('tool-output').textContent(), /Europe\/Paris/);
});

test('useChat: Stop ends a reply at once', async () => {
  const replies = await assistants().count();
  await send('wait 3000 ms');
  const stop = page.getByTestId('stop');
  await stop.waitFor();
  // Stop once the reply has started (its start chunk made the assistant
  // message): the server stores a reply from its start, so stopping before
  // the page saw it would leave the page one message short of the server.
  await assistants().nth(replies).waitFor();
  const started = Date.now();
  await stop.click();
  await page.getByTestId('send').waitFor({ timeout: 2000 });
  assert.ok(Date.now() - started < 2000, 'Stop returns promptly');
  await settled();
  assert.equal(await page.getByTestId('text').filter({ hasText: /^done$/ }).count(), 0, 'the stopped reply did not finish');
  // The server stopped the run (it outlives the request): the chat takes
  // the next message at once, and what is stored did not finish either.
  const last = (await stored()).at(-1);
  assert.ok(!last.parts.some((p) => p.type === 'text' && p.text === 'done'), 'the server did not finish the stopped reply');
  // The server keeps serving the chat.
  await send('count to 20');
  await expectReply(Array.from({ length: 20 }, (_, i) => i + 1).join(' '));
});

test('useChat: a model error shows in the error box', async () => {
  await send('fail');
  const error = page.getByTestId('error');
  await error.waitFor();
  assert.match(await error.textContent(), /An error occurred\./);
  assert.equal((await lastText().textContent()).trim(), 'Working on it', 'the partial reply is kept');
  await shot('error');
  await error.getByRole('button', { name: 'Dismiss the error' }).click();
  await error.waitFor({ state: 'detached' });
});

// streamingTool: research's progress shows on its card (preliminary
// output, "Progress"), which its result replaces. An observer records
// every progress the card showed.
async function streamingTool() {
  await page.evaluate(() => {
    window.__progress = [];
    window.__toolObserver?.disconnect();
    window.__toolObserver = new MutationObserver(() => {
      const card = document.querySelector('[data-testid=tool][data-tool-name=research][data-preliminary=true]');
      const t = card?.querySelector('[data-testid=tool-output]')?.textContent;
      if (t && window.__progress.at(-1) !== t) window.__progress.push(t);
    });
    window.__toolObserver.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  });
  await send('research owls');
  await expectReply('Research on owls: 3 sources agree that owls is worth a closer look.');
  const seen = await page.evaluate(() => {
    window.__toolObserver.disconnect();
    return window.__progress;
  });
  assert.ok(seen.length >= 1 && seen.every((t) => t.startsWith('Progress') && t.includes('"step"')), `the card showed progress: ${JSON.stringify(seen)}`);
  const tool = lastAssistant().locator('[data-testid=tool][data-tool-name=research]');
  assert.equal(await tool.getAttribute('data-preliminary'), null);
  assert.equal(await state(tool), 'output-available');
  assert.match(await tool.getByTestId('tool-output').textContent(), /^Output.*"sources": ?3/s);
}

test('useChat: a streaming tool shows its progress, then its result', streamingTool);

test('useChat: Regenerate answers the last message again', async () => {
  await send('hello');
  await expectReply('You said: hello');
  const before = await lastAssistant().getAttribute('data-message-id');
  const count = await page.getByTestId('message').count();
  await page.getByTestId('regenerate').click();
  await page.locator(`[data-testid=message][data-role=assistant][data-message-id="${before}"]`).waitFor({ state: 'detached' });
  await expectReply('You said: hello');
  assert.notEqual(await lastAssistant().getAttribute('data-message-id'), before, 'a new reply');
  assert.equal(await page.getByTestId('message').count(), count, 'the old reply was replaced');
});

test('useChat: an approval left unanswered expires with the next message', async () => {
  await send('delete /tmp/later.txt');
  const tool = lastAssistant().locator('[data-testid=tool][data-tool-name=delete_file]');
  await tool.and(page.locator('[data-state=approval-requested]')).waitFor();
  await settled();
  await send('hello');
  await expectReply('You said: hello');
  const stale = page.locator('[data-testid=tool][data-tool-name=delete_file][data-state=approval-expired]');
  assert.equal(await stale.count(), 1);
  assert.equal(await stale.getByTestId('approve').count(), 0, 'no buttons on an expired approval');
});

test('useChat: a reload shows the same conversation', async () => {
  const snapshot = () =>
    page.locator('[data-testid=message]').evaluateAll((els) =>
      els.map((el) => ({
        role: el.dataset.role,
        id: el.dataset.messageId,
        text: [...el.querySelectorAll('[data-testid=text]')].map((t) => t.textContent).join('|'),
        tools: [...el.querySelectorAll('[data-testid=tool]')].map((t) => `${t.dataset.toolName}:${t.dataset.state}`),
      })),
    );
  const before = await snapshot();
  const url = page.url();
  await page.reload();
  assert.equal(page.url(), url);
  await page.getByTestId('messages').waitFor();
  await lastAssistant().getByTestId('text').filter({ hasText: 'You said: hello' }).waitFor();
  const afterReload = await snapshot();
  // Every message after the reload is one the client held, with its id.
  // (A reply stopped before its first word is not stored, so the reload
  // may hold fewer messages than the page did.)
  const held = new Map(before.map((m) => [m.id, m]));
  for (const m of afterReload) {
    assert.ok(held.has(m.id), `message ${m.id} (${m.role}: ${m.text}) was not on the page before the reload`);
    if (m.text) assert.equal(m.text, held.get(m.id).text, `message ${m.id} changed`);
  }
  // The messages that matter are all there, with the ids the client held.
  for (const want of ['You said: ' + LONG, 'The weather in Paris is sunny, 21°C.', 'Deleted /tmp/x.txt.', 'You are in Paris.', 'You said: hello']) {
    assert.ok(afterReload.some((m) => m.role === 'assistant' && m.text.includes(want)), `after the reload: ${want}`);
  }
  const tools = afterReload.flatMap((m) => m.tools);
  for (const want of ['get_weather:output-available', 'delete_file:output-available', 'delete_file:output-denied', 'get_location:output-available']) {
    assert.ok(tools.includes(want), `after the reload: ${want} (have ${tools})`);
  }
  // Apart from replies stopped before their first word (not stored), the
  // reload is the conversation the page held; an approval the page showed
  // as expired is stored as denied ("not answered").
  const nonEmpty = before.filter((m) => m.role !== 'assistant' || m.text || m.tools.length);
  const expected = nonEmpty.map((m) => ({ ...m, tools: m.tools.map((t) => t.replace(':approval-expired', ':output-denied')) }));
  assert.deepEqual(afterReload, expected, 'the reloaded conversation is the one the page held');
  // Usage (message metadata) comes back with the stored conversation.
  assert.match(await lastAssistant().getByTestId('usage').textContent(), /^\d+ in · \d+ out · agentui-demo$/);
  await shot('reloaded');
});

test('useChat: a reload mid-reply shows the reply going on, once', async () => {
  const replies = await assistants().count();
  await send('think: wait 1500 ms');
  await assistants().nth(replies).getByTestId('reasoning').waitFor();
  await page.reload();
  await page.getByTestId('messages').waitFor();
  // The reply resumes (useChat's resume) and finishes; it shows once.
  await lastAssistant().getByTestId('text').filter({ hasText: /^done$/ }).waitFor({ timeout: 10000 });
  await settled();
  assert.equal(await assistants().count(), replies + 1, 'one reply, not two');
  assert.equal(await lastAssistant().getByTestId('reasoning').count(), 1, 'its reasoning once');
  const msgs = await stored();
  assert.equal(msgs.length, (await page.getByTestId('message').count()), 'the page shows what the server stored');
  assert.equal(msgs.at(-1).id, await lastAssistant().getAttribute('data-message-id'));
});

// busyShowsTheReply: a second tab on the same chat sends while the first
// tab's reply runs; the server refuses it (409, code busy) and the second
// tab shows the running reply instead of failing.
async function busyShowsTheReply() {
  await send('hello');
  await expectReply('You said: hello');
  const other = await context.newPage();
  const otherProblems = [];
  watch(other, otherProblems, 'second tab');
  try {
    await other.goto(page.url()); // loaded before the reply starts
    await other.getByTestId('input').waitFor();
    await other.locator('[data-testid=message][data-role=assistant]').last().getByTestId('text').filter({ hasText: 'You said: hello' }).waitFor();
    // The reply's reasoning shows at once: the run has started.
    const replies = await assistants().count();
    await send('think: wait 3000 ms');
    await assistants().nth(replies).getByTestId('reasoning').waitFor();
    await other.getByTestId('input').fill('hello from the second tab');
    await other.getByTestId('input').press('Enter');
    await other.getByTestId('error').filter({ hasText: 'from another tab' }).waitFor();
    const otherLast = other.locator('[data-testid=message][data-role=assistant]').last();
    await otherLast.getByTestId('text').filter({ hasText: /^done$/ }).waitFor({ timeout: 10000 });
    await other.locator('[data-testid=composer][data-status=streaming], [data-testid=composer][data-status=submitted]').waitFor({ state: 'detached' });
    await settled();
    // Both tabs show the same conversation: the first tab's message and
    // its reply once, and not the refused message.
    const snapshot = (p) =>
      p.locator('[data-testid=message]').evaluateAll((els) =>
        els.map((el) => el.dataset.role + ': ' + [...el.querySelectorAll('[data-testid=text]')].map((t) => t.textContent).join('|')),
      );
    const mine = await snapshot(page);
    assert.deepEqual(await snapshot(other), mine, 'the second tab shows what the first shows');
    assert.equal(mine.filter((m) => m === 'user: think: wait 3000 ms').length, 1);
    assert.ok(!mine.some((m) => m.includes('second tab')), 'the refused message is not in the chat');
    // Nothing else went wrong in the second tab (the browser, and
    // @ag-ui/client, may log the refused request itself).
    const unexpected = otherProblems.filter((p) => !/status of 409|HTTP 409: \{"error":"a reply is still being produced for this chat","code":"busy"\}/.test(p));
    assert.deepEqual(unexpected, [], 'the second tab logged errors or warnings');
  } finally {
    await other.close();
  }
}

test("useChat: a message sent while another tab's reply runs shows that reply instead", busyShowsTheReply);

test('useChat: markdown renders, highlighted; HTML and script links in user or model text do nothing', async () => {
  await send('markdown');
  const md = lastAssistant().getByTestId('text');
  await md.locator('table').waitFor();
  await settled();
  assert.equal(await md.locator('h2').textContent(), 'A markdown sample');
  assert.equal(await md.locator('strong').textContent(), 'bold');
  assert.equal(await md.locator('em').textContent(), 'italics');
  assert.equal(await md.locator('li').count(), 3);
  assert.equal(await md.locator('pre code.hljs.language-go').count(), 1, 'a highlighted Go block');
  assert.ok((await md.locator('pre code .hljs-keyword').count()) >= 1, 'keywords are marked up');
  assert.deepEqual(await md.locator('th').allTextContents(), ['Tool', 'Runs']);
  await shot('markdown');

  // The demo echoes the user's text, so it comes back as model text too.
  const evil =
    'x <img src=/nope.png onerror="window.__pwned=1"> <script>window.__pwned=2</script> ' +
    '[click me](javascript:window.__pwned=3) [data](data:text/html,hi) ![pic](https://example.com/p.png) <a href="javascript:window.__pwned=4">raw</a>';
  await send(evil);
  await lastText().filter({ hasText: 'click me' }).waitFor();
  await settled();
  const user = page.locator('[data-testid=message][data-role=user]').last();
  assert.equal((await user.getByTestId('text').textContent()).trim(), evil, 'the user message shows as typed');
  for (const where of [user, lastAssistant()]) {
    assert.equal(await where.locator('img, script, iframe, object, embed').count(), 0, 'no element from the text');
    const hrefs = await where.locator('a').evaluateAll((as) => as.map((a) => a.getAttribute('href') ?? ''));
    assert.ok(hrefs.every((h) => h === '' || /^https?:/.test(h)), `only http(s) links: ${JSON.stringify(hrefs)}`);
  }
  const link = lastAssistant().getByText('click me');
  await link.click();
  assert.equal(await page.evaluate(() => window.__pwned), undefined, 'nothing ran');
  assert.match(await lastAssistant().locator('.md-image').textContent(), /Image: pic/, 'an image shows as a link, not loaded');
  assert.equal(context.pages().length, 1, 'the script link opened nothing');
});

test('useChat: usage, copy, and deny with a reason', async () => {
  await send('hello');
  await expectReply('You said: hello');
  assert.match(await lastAssistant().getByTestId('usage').textContent(), /^\d+ in · \d+ out · agentui-demo$/);
  await lastAssistant().getByTestId('copy').click();
  await lastAssistant().getByTestId('copy').filter({ hasText: 'Copied' }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), 'You said: hello');

  await send('delete /tmp/reasoned.txt');
  const tool = lastAssistant().locator('[data-testid=tool][data-tool-name=delete_file]');
  await tool.and(page.locator('[data-state=approval-requested]')).waitFor();
  await settled();
  await tool.getByTestId('deny-reason').fill('keep that file');
  await tool.getByTestId('deny').click();
  await expectReply('Okay, I did not delete /tmp/reasoned.txt (reason: keep that file).');
  assert.equal(await state(tool), 'output-denied');
  assert.equal(await tool.getByTestId('approval-reason').textContent(), 'Reason: keep that file');
});

test('useChat: edit a sent message and get a new answer', async () => {
  await send('what is 1+1');
  await expectReply('You said: what is 1+1');
  const count = await page.getByTestId('message').count();
  const question = page.locator('[data-testid=message][data-role=user]').last();
  const id = await question.getAttribute('data-message-id');
  await question.getByTestId('edit').click();
  await question.getByTestId('edit-input').fill('what is 2+2\nexactly');
  await question.getByTestId('edit-input').press('Enter');
  await expectReply('You said: what is 2+2\nexactly');
  assert.equal(await page.getByTestId('message').count(), count, 'the edit replaced the question and its answer');
  assert.equal((await question.getByTestId('text').textContent()).trim(), 'what is 2+2\nexactly');
  const msgs = await stored();
  assert.equal(msgs.at(-2).id, id, 'the server kept the edited message under its id');
  assert.equal(msgs.filter((m) => JSON.stringify(m).includes('1+1')).length, 0, 'the server dropped the old question and answer');
});

// failedKeepsMark: a failed reply shows as failed, also after a reload
// (useChat: the stored metadata's finishReason; AG-UI 1.0: the message's).
async function failedKeepsMark() {
  await send('fail');
  await page.getByTestId('error').waitFor();
  await lastAssistant().and(page.locator('[data-failed=true]')).waitFor();
  await page.reload();
  await lastAssistant().getByTestId('text').filter({ hasText: 'Working on it' }).waitFor();
  await settled();
  assert.equal(await lastAssistant().getAttribute('data-failed'), 'true');
  assert.match(await lastAssistant().getByTestId('failed').textContent(), /failed/);
  await send('hello');
  await expectReply('You said: hello');
}

test('useChat: a failed reply keeps its mark after a reload', failedKeepsMark);

// countWithoutFreezing asks for 10,000 deltas in one burst and types while
// they stream. A ticker measures the longest the main thread went without
// running it: a frozen tab (what this guards against) paused for more
// than 30 s.
async function countWithoutFreezing(label) {
  await page.evaluate(() => {
    window.__gap = 0;
    let last = performance.now();
    window.__ticker = setInterval(() => {
      const now = performance.now();
      window.__gap = Math.max(window.__gap, now - last);
      last = now;
    }, 10);
  });
  await send('count to 10000');
  await lastText().filter({ hasText: /^1 2 3/ }).waitFor({ timeout: 60000 });
  await input().pressSequentially('typing while it streams', { timeout: 60000 });
  // The clients' own work on 10,000 chunks takes seconds of CPU (about 5 s
  // for useChat on an idle 2-core machine, more on a loaded one): wait
  // for it as long as it takes, within reason.
  await settled(120000);
  assert.equal(await input().inputValue(), 'typing while it streams', 'every keystroke landed');
  assert.ok((await lastText().textContent()).trim().endsWith(' 9999 10000'), 'the whole reply arrived');
  const gap = await page.evaluate(() => {
    clearInterval(window.__ticker);
    return window.__gap;
  });
  console.log(`e2e: count to 10000 (${label}): the main thread's longest pause was ${Math.round(gap)} ms`);
  assert.ok(gap < 5000, `the page froze for ${Math.round(gap)} ms`);
  await input().fill('');
}

test('useChat: count to 10000 streams without freezing the page', () => countWithoutFreezing('useChat'));

test('the chat list opens, renames and deletes chats', async () => {
  const current = new URL(page.url()).searchParams.get('chat');
  const item = (id) => page.locator(`[data-testid=chat-item][data-chat-id="${id}"]`);
  await item(current).waitFor();
  assert.equal(await item(current).getByTestId('chat-title').textContent(), 'tell me a long story about a cat who lived in Paris and…');
  assert.equal(await page.getByTestId('chat-heading').textContent(), await item(current).getByTestId('chat-title').textContent());
  // A second chat, listed first once it has a reply.
  await page.getByTestId('new-chat').click();
  await page.getByTestId('empty').waitFor();
  const second = new URL(page.url()).searchParams.get('chat');
  await send('weather in Oslo');
  await expectReply('The weather in Oslo is sunny, 21°C.');
  await item(second).waitFor();
  assert.equal(await page.getByTestId('chat-item').first().getAttribute('data-chat-id'), second, 'newest first');
  // Open the first chat again: its conversation loads.
  await item(current).getByTestId('chat-open').click();
  await page.waitForURL((u) => u.searchParams.get('chat') === current);
  await page.getByTestId('messages').waitFor();
  await lastAssistant().getByTestId('text').first().waitFor();
  assert.ok((await page.getByTestId('message').count()) > 10, 'the whole first chat is back');
  // Rename it.
  await item(current).getByTestId('chat-rename').click();
  await item(current).getByTestId('chat-title-input').fill('Cats and tools');
  await item(current).getByTestId('chat-title-input').press('Enter');
  await item(current).getByTestId('chat-title').filter({ hasText: 'Cats and tools' }).waitFor();
  await page.getByTestId('chat-heading').filter({ hasText: 'Cats and tools' }).waitFor();
  await shot('chat-list');
  // Delete the second one (not open): it goes; this one stays open.
  await item(second).hover();
  await item(second).getByTestId('chat-delete').click();
  await item(second).getByTestId('chat-delete-confirm').click();
  await item(second).waitFor({ state: 'detached' });
  assert.equal(new URL(page.url()).searchParams.get('chat'), current);
  const listed = await page.evaluate(async () => (await (await fetch('/api/chats')).json()).chats.map((c) => c.id));
  assert.ok(listed.includes(current) && !listed.includes(second), 'the server deleted it');
});

test('390×844: the page fits a phone, with the chat list in a drawer', async () => {
  // A fresh chat with a bit of everything, for the screenshots.
  await page.getByTestId('new-chat').click();
  await page.getByTestId('empty').waitFor();
  await send('weather in Paris');
  await expectReply('The weather in Paris is sunny, 21°C.');
  await page.setViewportSize({ width: 390, height: 844 });
  try {
    await send('markdown');
    await lastAssistant().locator('table').waitFor();
    await settled();
    await send('delete /tmp/phone.txt');
    await lastAssistant().locator('[data-testid=tool][data-state=approval-requested]').waitFor();
    await settled();
    const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.equal(await overflow(), 0, 'no horizontal scrolling');
    assert.ok(await page.getByTestId('sidebar').evaluate((el) => el.getBoundingClientRect().right <= 0), 'the chat list is closed');
    await shot('phone');
    assert.ok(await page.getByTestId('input').evaluate((el) => el.getBoundingClientRect().bottom <= innerHeight), 'the composer is on screen');
    assert.ok(
      await lastAssistant().getByTestId('deny').evaluate((el) => el.getBoundingClientRect().bottom <= innerHeight),
      'the newest message is in view',
    );
    await page.screenshot({ path: join(OUT, 'phone-chat.png') });
    await page.getByTestId('menu').click();
    await page.getByTestId('chat-list').waitFor({ state: 'visible' });
    await page.waitForFunction(() => document.querySelector('[data-testid=sidebar]').getBoundingClientRect().left >= 0);
    assert.equal(await overflow(), 0, 'no horizontal scrolling with the list open');
    await page.screenshot({ path: join(OUT, 'phone-list.png') });
    await page.locator('.scrim').click({ position: { x: 370, y: 400 } });
    await page.waitForFunction(() => document.querySelector('[data-testid=sidebar]').getBoundingClientRect().right <= 0);
    await lastAssistant().getByTestId('deny').click();
    await lastText().filter({ hasText: 'did not delete' }).waitFor();
    await settled();
  } finally {
    await page.setViewportSize({ width: 1100, height: 800 });
  }
  await page.getByTestId('chat-item').first().hover();
  await page.screenshot({ path: join(OUT, 'desktop-chat.png') });
});

test('useChat: New chat starts an empty conversation with a new id', async () => {
  const old = new URL(page.url()).searchParams.get('chat');
  await page.getByTestId('new-chat').click();
  await page.getByTestId('empty').waitFor();
  const id = new URL(page.url()).searchParams.get('chat');
  assert.ok(id && id !== old, 'a new chat id');
  await send('hello again');
  await expectReply('You said: hello again');
  assert.equal(await page.getByTestId('message').count(), 2);
});

test('AG-UI: the protocol switch runs the chat over HttpAgent', async () => {
  await page.getByTestId('protocol-switch').selectOption('agui');
  await page.locator('[data-testid=app][data-protocol=agui]').waitFor();
  await page.getByTestId('empty').waitFor();
  assert.equal(new URL(page.url()).searchParams.get('protocol'), 'agui');
  await watchText();
  await send(LONG);
  await expectReply('You said: ' + LONG);
  assertStreamed(await seenTexts(), 'You said: ' + LONG);
  await send('think about hello');
  await expectReply('You said: think about hello');
  assert.match(await lastAssistant().getByTestId('reasoning').textContent(), /Thinking about: think about hello/);
});

test('AG-UI: a server tool call', async () => {
  await send('weather in Paris');
  await expectReply('The weather in Paris is sunny, 21°C.');
  const tool = lastAssistant().locator('[data-testid=tool][data-tool-name=get_weather]');
  assert.equal(await state(tool), 'output-available');
  assert.match(await tool.getByTestId('tool-output').textContent(), /sunny/);
});

test('AG-UI: a streaming tool shows its progress, then its result', streamingTool);

test('AG-UI: approve and deny interrupts', async () => {
  await send('delete /tmp/x.txt');
  let tool = lastAssistant().locator('[data-testid=tool][data-tool-name=delete_file]');
  await tool.and(page.locator('[data-state=approval-requested]')).waitFor();
  await settled();
  await shot('agui-interrupt');
  await tool.getByTestId('approve').click();
  await expectReply('Deleted /tmp/x.txt.');
  assert.equal(await state(tool), 'output-available');

  await send('delete /tmp/keep.txt');
  tool = lastAssistant().locator('[data-testid=tool][data-tool-name=delete_file]').last();
  await tool.and(page.locator('[data-state=approval-requested]')).waitFor();
  await tool.getByTestId('deny').click();
  await lastText().filter({ hasText: 'did not delete' }).waitFor();
  await settled();
  assert.match(await lastText().textContent(), /^Okay, I did not delete \/tmp\/keep\.txt/);
  assert.equal(await state(tool), 'output-denied');
});

test('AG-UI: a pending approval survives a reload and can be approved', async () => {
  await send('delete /tmp/reload.txt');
  const pending = () => lastAssistant().locator('[data-testid=tool][data-tool-name=delete_file][data-state=approval-requested]');
  await pending().waitFor();
  await settled();
  const before = await page.getByTestId('message').count();
  await page.reload();
  await pending().waitFor(); // restored by connect, still answerable
  await settled();
  assert.equal(await page.getByTestId('message').count(), before, 'the thread came back whole');
  await pending().getByTestId('approve').click();
  await expectReply('Deleted /tmp/reload.txt.');
});

test('AG-UI: a reload mid-reply reattaches to it', async () => {
  const replies = await assistants().count();
  await send('think: wait 1500 ms');
  await assistants().nth(replies).getByTestId('reasoning').waitFor();
  await page.reload();
  await lastAssistant().getByTestId('text').filter({ hasText: /^done$/ }).waitFor({ timeout: 10000 });
  await settled();
  assert.equal(await assistants().count(), replies + 1, 'one reply, not two');
  await send('hello');
  await expectReply('You said: hello');
});

test("AG-UI: a message sent while another tab's reply runs shows that reply instead", busyShowsTheReply);

test('AG-UI: the page answers the get_location frontend tool', async () => {
  await send('where am I');
  await expectReply('You are in Paris.');
  const tool = lastAssistant().locator('[data-testid=tool][data-tool-name=get_location]');
  assert.equal(await state(tool), 'output-available');
  assert.match(await tool.getByTestId('tool-output').textContent(), /Europe\/Paris/);
});

test('AG-UI: markdown, usage, edit and deny with a reason', async () => {
  await send('markdown');
  await lastAssistant().locator('table').waitFor();
  await settled();
  assert.equal(await lastAssistant().locator('pre code.hljs.language-go').count(), 1);
  assert.match(await lastAssistant().getByTestId('usage').textContent(), /^\d+ in · \d+ out · agentui-demo$/, 'RUN_FINISHED.usage (AG-UI 1.0)');

  await send('what is 1+1');
  await expectReply('You said: what is 1+1');
  const count = await page.getByTestId('message').count();
  const question = page.locator('[data-testid=message][data-role=user]').last();
  await question.getByTestId('edit').click();
  await question.getByTestId('edit-input').fill('what is 3+3');
  await question.getByTestId('edit-save').click();
  await expectReply('You said: what is 3+3');
  assert.equal(await page.getByTestId('message').count(), count, 'the edit replaced the question and its answer');

  await send('delete /tmp/agui-reason.txt');
  const tool = lastAssistant().locator('[data-testid=tool][data-tool-name=delete_file]').last();
  await tool.and(page.locator('[data-state=approval-requested]')).waitFor();
  await settled();
  await tool.getByTestId('deny-reason').fill('not today');
  await tool.getByTestId('deny').click();
  await expectReply('Okay, I did not delete /tmp/agui-reason.txt (reason: not today).');
  assert.equal(await tool.getByTestId('approval-reason').textContent(), 'Reason: not today');
  // After a reload the server's copy agrees: the old question is gone.
  await page.reload();
  await lastAssistant().getByTestId('text').filter({ hasText: 'reason: not today' }).waitFor();
  await settled();
  const texts = await page.getByTestId('text').allTextContents();
  assert.ok(texts.some((t) => t.includes('what is 3+3')) && !texts.some((t) => t.includes('1+1')), 'the edit is stored');
  assert.match(await lastAssistant().getByTestId('usage').textContent(), /^\d+ in · \d+ out · agentui-demo$/, 'usage after a reload (AG-UI 1.0 message metadata)');
});

test('AG-UI: a failed reply keeps its mark after a reload', failedKeepsMark);

test('AG-UI: count to 10000 streams without freezing the page', () => countWithoutFreezing('AG-UI'));

test('AG-UI: the chat list opens a past chat over connect', async () => {
  const current = new URL(page.url()).searchParams.get('chat');
  await page.getByTestId('new-chat').click();
  await page.getByTestId('empty').waitFor();
  await send('hello from another thread');
  await expectReply('You said: hello from another thread');
  const item = page.locator(`[data-testid=chat-item][data-chat-id="${current}"]`);
  await item.getByTestId('chat-open').click();
  await page.waitForURL((u) => u.searchParams.get('chat') === current && u.searchParams.get('protocol') === 'agui');
  await lastAssistant().getByTestId('text').filter({ hasText: '10000' }).waitFor();
  await settled();
  await send('hello');
  await expectReply('You said: hello');
});

test('AG-UI: Stop and Regenerate', async () => {
  await send('wait 3000 ms');
  await page.getByTestId('stop').click();
  await page.getByTestId('send').waitFor({ timeout: 2000 });
  await settled();
  await send('hello');
  await expectReply('You said: hello');
  const count = await page.getByTestId('message').count();
  await page.getByTestId('regenerate').click();
  await expectReply('You said: hello');
  assert.equal(await page.getByTestId('message').count(), count);
  await shot('agui');
});
