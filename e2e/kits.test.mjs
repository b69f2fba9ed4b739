// Popular chat kits against agentui, wired as docs/frontends.md says and
// driven in Debian's Chromium: assistant-ui (its AI SDK runtime on
// /api/chat) and CopilotKit (its React chat and its Node runtime, with an
// AG-UI HttpAgent on /api/agui). Each runs without history (no scope
// credential: the kit's own thread is the conversation) and with history
// (agentui keeps the thread): multi-turn memory, a frontend tool,
// approve and deny, edit, reload. A useChat page (ai@6) and the
// assistant-ui page also run on Vite's dev server, which proxies /api to
// agentui (the useChat page cross-origin with -cors-origins too), asking
// for no token: the browser's first API request gets its scope; there
// both also resume a reply after a reload and follow one that another
// tab started.
//
//   AGENTUI_BIN=/path/to/agentui node e2e/kits.test.mjs    (make e2e-kits
//   does this, after building the kits' pages in e2e/kits/*/dist)
//
// Any console error or warning and any uncaught page error fails the test
// that caused it. Without Chromium the test is skipped, except under CI.
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { executable, launch, requireChromium, start, stop, watch } from './harness.mjs';

const BIN = process.env.AGENTUI_BIN;
const KITS = join(dirname(fileURLToPath(import.meta.url)), 'kits');

requireChromium('kits');
if (!BIN || !executable(BIN)) {
  console.error('kits: set AGENTUI_BIN to a built agentui binary (make e2e-kits does).');
  process.exit(2);
}

let agentui;
let browser;
const problems = [];

before(async () => {
  agentui = await start(BIN, ['-addr', '127.0.0.1:0', '-demo-delay', '10ms']);
  browser = await launch();
  browser.context.setDefaultTimeout(15000);
});

after(async () => {
  await browser?.close();
  await stop(agentui);
});

afterEach(() => {
  const found = problems.splice(0);
  assert.deepEqual(found, [], 'the page logged errors or warnings');
});

// withPage opens a page at url, runs fn on it and closes it.
async function withPage(url, fn, label) {
  const page = await browser.context.newPage();
  watch(page, problems, label);
  try {
    await page.goto(url);
    return await fn(page);
  } finally {
    await page.close();
  }
}

// modelSaw reads the demo model's "/context" answer (the messages it was
// given) from text: role:text for each, without the server's system
// prompt.
function modelSaw(text) {
  const json = JSON.parse(text.slice(text.indexOf('['), text.lastIndexOf(']') + 1));
  return json.filter((m) => m.role !== 'system').map((m) => `${m.role}:${m.text}`);
}

// ------------------------------------------------------------ assistant-ui

describe('assistant-ui', () => {
  let site;
  before(async () => {
    site = await start('node', [join(KITS, 'assistant-ui', 'server.mjs')], { env: { AGENTUI: agentui.url } });
  });
  after(() => stop(site));

  // Replies already shown are marked, so a wait never takes one for the
  // next.
  const markOld = (page) => page.$$eval('[data-role=assistant]', (els) => els.forEach((e) => (e.dataset.old = '1')));
  const ready = (page) => page.locator('[data-testid=thread][data-loading=false]').waitFor();
  async function send(page, text) {
    await markOld(page);
    await page.getByTestId('composer').fill(text);
    await page.getByTestId('send').click();
  }
  // reply waits until the newest reply has text and the thread is idle,
  // and returns the reply's text.
  async function reply(page, text) {
    await page.waitForFunction((t) => {
      const fresh = document.querySelectorAll('[data-role=assistant]:not([data-old])');
      const last = fresh[fresh.length - 1];
      return last?.innerText.includes(t) && document.querySelector('[data-testid=thread]')?.dataset.running === 'false';
    }, text);
    return page.$$eval('[data-role=assistant] .parts', (els) => els.at(-1).innerText);
  }
  const context = async (page) => modelSaw(await reply(page, ']'));
  async function edit(page, index, text) {
    const msg = page.locator('[data-role=user]').nth(index);
    await markOld(page);
    await msg.hover();
    await msg.getByTestId('edit').click();
    await page.getByTestId('edit-input').fill(text);
    await page.getByTestId('edit-save').click();
  }
  const shown = (page) => page.$$eval('[data-role]', (els) => els.map((e) => `${e.dataset.role}:${e.querySelector('.parts').innerText.trim()}`));

  for (const mode of ['without history', 'with history']) {
    const home = () => site.url + (mode === 'with history' ? '/?history=1' : '/');
    const run = (fn) => withPage(home(), async (page) => (await ready(page), fn(page)), `assistant-ui ${mode}`);

    test(`${mode}: multi-turn memory`, () =>
      run(async (page) => {
        await send(page, 'hello');
        await reply(page, 'You said: hello');
        await send(page, '/context');
        assert.deepEqual(await context(page), ['user:hello', 'assistant:You said: hello', 'user:/context']);
      }));

    test(`${mode}: the page answers a frontend tool (body.tools)`, () =>
      run(async (page) => {
        await send(page, 'where am i');
        await reply(page, 'You are in Paris.');
      }));

    test(`${mode}: approve and deny`, () =>
      run(async (page) => {
        await send(page, 'delete notes.txt');
        await page.getByTestId('approve').click();
        await reply(page, 'Deleted notes.txt.');
        await send(page, 'delete other.txt');
        await page.getByTestId('deny').click();
        await reply(page, 'Okay, I did not delete other.txt (reason: no).');
        assert.match(await page.getByTestId('tool-delete_file').last().innerText(), /denied/);
      }));

    test(`${mode}: edit a later message, then the first (a new id each time)`, () =>
      run(async (page) => {
        await send(page, 'one');
        await reply(page, 'You said: one');
        await send(page, 'two');
        await reply(page, 'You said: two');
        await edit(page, 1, '/context');
        assert.deepEqual(await context(page), ['user:one', 'assistant:You said: one', 'user:/context']);
        await edit(page, 0, '/context');
        assert.deepEqual(await context(page), ['user:/context']);
      }));
  }

  test('with history: a reload restores the thread, and the model still has it', () =>
    withPage(site.url + '/?history=1', async (page) => {
      await ready(page);
      await send(page, 'hello');
      await reply(page, 'You said: hello');
      await page.waitForURL((u) => u.searchParams.has('thread'));
      await page.reload();
      await ready(page);
      await page.locator('[data-role=assistant]').filter({ hasText: 'You said: hello' }).waitFor();
      await send(page, '/context');
      assert.deepEqual(await context(page), ['user:hello', 'assistant:You said: hello', 'user:/context']);
    }));

  test('with history: a pending approval survives a reload', () =>
    withPage(site.url + '/?history=1', async (page) => {
      await ready(page);
      await send(page, 'delete notes.txt');
      await page.getByTestId('approve').waitFor();
      await page.locator('[data-testid=thread][data-running=false]').waitFor();
      await page.reload();
      await page.getByTestId('approve').click();
      await reply(page, 'Deleted notes.txt.');
    }));

  test('with history: a reload after a client tool and an edit shows the stored branch', () =>
    withPage(site.url + '/?history=1', async (page) => {
      await ready(page);
      await send(page, 'where am i');
      await reply(page, 'You are in Paris.');
      await send(page, 'two');
      await reply(page, 'You said: two');
      await edit(page, 1, 'three');
      await reply(page, 'You said: three');
      await page.reload();
      await ready(page);
      await page.locator('[data-role=assistant]').filter({ hasText: 'You said: three' }).waitFor();
      assert.deepEqual(await shown(page), ['user:where am i', 'assistant:You are in Paris.', 'user:three', 'assistant:You said: three']);
    }));

  // Edits and regenerations keep the versions they replace: the branch
  // picker ("‹ 1/2 ›", assistant-ui's own) switches between them, before
  // and after a reload (the history adapter loads GET /api/chat/{id}/tree
  // as it is), and a message sent on a branch switched back to builds on
  // that branch: the model sees what the page shows.
  test('with history: edits and regenerations keep branches; the picker switches them, also after a reload', () =>
    withPage(site.url + '/?history=1', async (page) => {
      const picker = (role, i) => page.locator(`[data-role=${role}]`).nth(i).getByTestId('branch-number');
      await ready(page);
      await send(page, 'one');
      await reply(page, 'You said: one');
      await send(page, 'two');
      await reply(page, 'You said: two');
      await edit(page, 1, 'three');
      await reply(page, 'You said: three');
      assert.equal(await picker('user', 1).innerText(), '2/2');
      await markOld(page);
      await page.locator('[data-role=assistant]').last().hover();
      await page.getByTestId('regenerate').last().click();
      await reply(page, 'You said: three');
      assert.equal(await picker('assistant', 1).innerText(), '2/2');
      await page.waitForURL((u) => u.searchParams.has('thread'));
      await page.reload();
      await ready(page);
      await page.locator('[data-role=assistant]').filter({ hasText: 'You said: three' }).waitFor();
      assert.deepEqual(await shown(page), ['user:one', 'assistant:You said: one', 'user:three', 'assistant:You said: three']);
      assert.equal(await picker('user', 1).innerText(), '2/2', 'the edit\'s versions after a reload');
      assert.equal(await picker('assistant', 1).innerText(), '2/2', 'the regeneration\'s versions after a reload');
      await page.locator('[data-role=user]').nth(1).getByTestId('branch-previous').click();
      await page.locator('[data-role=user]').nth(1).filter({ hasText: 'two' }).waitFor();
      assert.deepEqual(await shown(page), ['user:one', 'assistant:You said: one', 'user:two', 'assistant:You said: two']);
      assert.equal(await picker('user', 1).innerText(), '1/2');
      await send(page, '/context');
      assert.deepEqual(await context(page), ['user:one', 'assistant:You said: one', 'user:two', 'assistant:You said: two', 'user:/context']);
      await page.reload();
      await ready(page);
      await page.locator('[data-role=user]').filter({ hasText: '/context' }).waitFor();
      assert.deepEqual((await shown(page)).slice(0, 4), ['user:one', 'assistant:You said: one', 'user:two', 'assistant:You said: two']);
      assert.equal(await picker('user', 1).innerText(), '1/2', 'the branch sent on is the active one after a reload');
    }));

  // assistant-ui's attachment adapter (its AttachmentAdapter, in the
  // page) uploads an image to agentui's file route; the message carries
  // its URL, not the bytes, and the model is given the image.
  test('with history: an attached image is uploaded, sent by reference and given to the model', () =>
    withPage(site.url + '/?history=1', async (page) => {
      const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
      const posted = [];
      page.on('request', (r) => r.method() === 'POST' && new URL(r.url()).pathname === '/api/chat' && posted.push(r.postData() ?? ''));
      await ready(page);
      const chooser = page.waitForEvent('filechooser');
      await page.getByTestId('attach').click();
      await (await chooser).setFiles({ name: 'dot.png', mimeType: 'image/png', buffer: Buffer.from(png, 'base64') });
      await page.getByTestId('attachment').waitFor();
      const uploaded = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/files' && r.status() === 201);
      await send(page, '/context');
      await uploaded;
      assert.match(await reply(page, 'image:'), /image:base64/, 'the model was given the image');
      assert.ok(posted.length > 0 && posted.every((b) => !b.includes(png.slice(0, 40))), 'the chat request carried no bytes');
      assert.ok(posted.some((b) => b.includes('/api/files/sha256-')), "the chat request carried the file's URL");
    }));

  // The same page on Vite's dev server, which proxies /api to agentui,
  // and with no token asked first: the browser's first API request gets
  // its scope, and reload, edit and regenerate keep the thread.
  describe('on a Vite dev server proxying /api, without asking for a token', () => {
    let dev;
    before(async () => {
      dev = await start('node', [join(KITS, 'assistant-ui', 'dev.mjs')], { env: { AGENTUI: agentui.url, NAME: 'assistant-ui (vite dev)' } });
    });
    after(() => stop(dev));
    // Vite's dev server transforms the page's modules on every load: on a
    // machine busy with other tests a reload takes seconds, so its pages
    // wait twice the usual for what they show.
    const runDev = (fn) =>
      withPage(dev.url + '/?history=auto', async (page) => (page.setDefaultTimeout(30000), await ready(page), fn(page)), 'assistant-ui on vite dev');

    test('a reload restores the thread, and the model still has it', () =>
      runDev(async (page) => {
        await send(page, 'hello');
        await reply(page, 'You said: hello');
        await page.waitForURL((u) => u.searchParams.has('thread'));
        await page.reload();
        await ready(page);
        await page.locator('[data-role=assistant]').filter({ hasText: 'You said: hello' }).waitFor();
        await send(page, '/context');
        assert.deepEqual(await context(page), ['user:hello', 'assistant:You said: hello', 'user:/context']);
      }));

    test('an edit, then a reload, shows the stored branch', () =>
      runDev(async (page) => {
        await send(page, 'one');
        await reply(page, 'You said: one');
        await send(page, 'two');
        await reply(page, 'You said: two');
        await edit(page, 1, 'three');
        await reply(page, 'You said: three');
        await page.reload();
        await ready(page);
        await page.locator('[data-role=assistant]').filter({ hasText: 'You said: three' }).waitFor();
        assert.deepEqual(await shown(page), ['user:one', 'assistant:You said: one', 'user:three', 'assistant:You said: three']);
      }));

    test('regenerate replaces the reply, also after a reload', () =>
      runDev(async (page) => {
        await send(page, 'hello');
        await reply(page, 'You said: hello');
        await markOld(page);
        await page.locator('[data-role=assistant]').last().hover();
        await page.getByTestId('regenerate').last().click();
        await reply(page, 'You said: hello');
        await page.reload();
        await ready(page);
        await page.locator('[data-role=assistant]').filter({ hasText: 'You said: hello' }).waitFor();
        assert.deepEqual(await shown(page), ['user:hello', 'assistant:You said: hello']);
        await send(page, '/context');
        assert.deepEqual(await context(page), ['user:hello', 'assistant:You said: hello', 'user:/context']);
      }));

    test('a reload mid-reply resumes it (the resumable transport)', () =>
      runDev(async (page) => {
        await send(page, 'think: wait 2000 ms');
        await page.locator('[data-testid=thread][data-running=true]').waitFor();
        await page.waitForURL((u) => u.searchParams.has('thread'));
        await page.reload();
        await page.locator('[data-role=assistant]').filter({ hasText: 'done' }).waitFor();
        await page.locator('[data-testid=thread][data-running=false][data-loading=false]').waitFor();
        assert.deepEqual(await shown(page), ['user:think: wait 2000 ms', 'assistant:done']);
        // Once it finished, a reload shows it stored, and resumes nothing.
        await page.reload();
        await ready(page);
        await page.locator('[data-role=assistant]').filter({ hasText: 'done' }).waitFor();
        assert.deepEqual(await shown(page), ['user:think: wait 2000 ms', 'assistant:done']);
      }));

    // Cancel only aborts the request; sending again stops the reply on
    // the server, which keeps what it had as stopped.
    test('stop mid-stream then send', () =>
      runDev(async (page) => {
        await send(page, 'think: wait 5000 ms');
        await page.locator('[data-testid=thread][data-running=true]').waitFor();
        await page.waitForURL((u) => u.searchParams.has('thread'));
        await page.getByTestId('stop').click();
        await page.locator('[data-testid=thread][data-running=false]').waitFor();
        await send(page, 'hello');
        await reply(page, 'You said: hello');
        const want = ['user:think: wait 5000 ms', 'assistant:', 'user:hello', 'assistant:You said: hello'];
        assert.deepEqual(await shown(page), want);
        await page.reload();
        await ready(page);
        await page.locator('[data-role=assistant]').filter({ hasText: 'You said: hello' }).waitFor();
        assert.deepEqual(await shown(page), want);
        await send(page, '/context');
        assert.deepEqual((await context(page)).slice(-3), ['user:hello', 'assistant:You said: hello', 'user:/context']);
      }));

    test('a message sent from a second tab while a reply runs shows that reply', () =>
      runDev(async (page) => {
        await send(page, 'hello');
        await reply(page, 'You said: hello');
        await page.waitForURL((u) => u.searchParams.has('thread'));
        const other = await browser.context.newPage();
        const otherProblems = [];
        watch(other, otherProblems, 'assistant-ui second tab');
        try {
          await other.goto(page.url());
          await ready(other);
          await other.locator('[data-role=assistant]').filter({ hasText: 'You said: hello' }).waitFor();
          await send(page, 'think: wait 3000 ms');
          await page.locator('[data-testid=thread][data-running=true]').waitFor();
          await send(other, 'hello from the second tab');
          await other.getByTestId('notice').waitFor();
          await other.locator('[data-role=assistant]').filter({ hasText: 'done' }).waitFor();
          await reply(page, 'done');
          await other.locator('[data-testid=thread][data-running=false]').waitFor();
          const want = ['user:hello', 'assistant:You said: hello', 'user:think: wait 3000 ms', 'assistant:done'];
          assert.deepEqual(await shown(other), want);
          // The refusal itself (409) is the browser's console line; nothing else.
          const unexpected = otherProblems.filter((p) => !p.includes('status of 409'));
          assert.deepEqual(unexpected, [], 'the second tab logged errors or warnings');
          await page.reload();
          await ready(page);
          await page.locator('[data-role=assistant]').filter({ hasText: 'done' }).waitFor();
          assert.deepEqual(await shown(page), want);
        } finally {
          await other.close();
        }
      }));
  });
});

// -------------------------------------------------------------- CopilotKit

describe('CopilotKit', () => {
  let site;
  const startSite = (port) =>
    start('node', [join(KITS, 'copilotkit', 'server.mjs')], {
      env: { AGENTUI: agentui.url, COPILOTKIT_TELEMETRY_DISABLED: 'true', ...(port && { PORT: port }) },
    });
  before(async () => {
    site = await startSite();
  });
  after(() => stop(site));

  const assistant = (page) => page.getByTestId('copilot-assistant-message');
  // send clicks Send, which CopilotChat enables only once its runtime is
  // ready (Enter before that is dropped).
  async function send(page, text) {
    await page.getByTestId('copilot-chat-textarea').fill(text);
    await page.getByTestId('copilot-send-button').click();
  }
  const reply = (page, text) => assistant(page).filter({ hasText: text }).first().waitFor();
  // context sends /context and returns what the model was given.
  async function context(page) {
    const isContext = '[data-testid=copilot-assistant-message]';
    const before = await assistant(page).filter({ hasText: '"role":"system"' }).count();
    await send(page, '/context');
    await page.waitForFunction(
      ([sel, n]) => [...document.querySelectorAll(sel)].filter((e) => e.innerText.includes('"role":"system"') && e.innerText.trim().endsWith(']')).length > n,
      [isContext, before],
    );
    return modelSaw(await assistant(page).filter({ hasText: '"role":"system"' }).last().innerText());
  }

  for (const mode of ['without history', 'with history']) {
    const url = (thread) => `${site.url}/?${mode === 'with history' ? 'history=1&' : ''}${thread ? `thread=${randomUUID()}` : ''}`;
    const run = (fn, thread) => withPage(url(thread), async (page) => (await page.getByTestId('copilot-chat-textarea').waitFor(), fn(page)), `CopilotKit ${mode}`);

    test(`${mode}: multi-turn memory`, () =>
      run(async (page) => {
        await send(page, 'hello');
        await reply(page, 'You said: hello');
        assert.deepEqual(await context(page), ['user:hello', 'assistant:You said: hello', 'user:/context']);
      }));

    test(`${mode}: the page answers a frontend tool (useFrontendTool)`, () =>
      run(async (page) => {
        await send(page, 'where am i');
        await reply(page, 'You are in Paris.');
      }));

    test(`${mode}: approve and deny (useInterrupt)`, () =>
      run(async (page) => {
        await send(page, 'delete notes.txt');
        await page.getByTestId('approve').click();
        await reply(page, 'Deleted notes.txt.');
        await send(page, 'delete other.txt');
        await page.getByTestId('deny').click();
        await reply(page, 'Okay, I did not delete other.txt (reason: not now).');
      }));

    test(`${mode}: edit a sent message`, () =>
      run(async (page) => {
        await send(page, 'hello');
        await reply(page, 'You said: hello');
        await send(page, 'second');
        await reply(page, 'You said: second');
        page.once('dialog', (d) => d.accept('hi'));
        await page.getByTestId('copilot-user-message').first().hover();
        await page.getByTestId('copilot-edit-button').first().click();
        await reply(page, 'You said: hi');
        assert.deepEqual(await context(page), ['user:hi', 'assistant:You said: hi', 'user:/context']);
      }));

    // CopilotChat keeps a message typed while a reply runs (Enter with
    // text sends; the button is Stop) and sends it once the reply ends:
    // its queue is the browser's, and agentui takes the turn at once.
    test(`${mode}: a message sent while a reply runs is answered after it`, () =>
      run(async (page) => {
        await send(page, 'think: wait 2000 ms');
        await page.locator('[data-copilot-running=true]').first().waitFor();
        await page.getByTestId('copilot-chat-textarea').fill('hello');
        await page.getByTestId('copilot-chat-textarea').press('Enter');
        await reply(page, 'You said: hello');
        await page.locator('[data-copilot-running=false]').first().waitFor();
        assert.equal(await assistant(page).filter({ hasText: /^\s*done\s*$/ }).count(), 1, 'the running reply finished');
        assert.deepEqual((await context(page)).slice(-3), ['user:hello', 'assistant:You said: hello', 'user:/context']);
      }, true));

    test(`${mode}: a reload restores the thread`, () =>
      run(async (page) => {
        await send(page, 'hello');
        await reply(page, 'You said: hello');
        await page.reload();
        await reply(page, 'You said: hello');
        assert.deepEqual(await context(page), ['user:hello', 'assistant:You said: hello', 'user:/context']);
      }, true));

    test(`${mode}: a pending approval survives a reload`, () =>
      run(async (page) => {
        await send(page, 'delete notes.txt');
        await page.getByTestId('approve').waitFor();
        await page.reload();
        await page.getByTestId('approve').click();
        await reply(page, 'Deleted notes.txt.');
      }, true));
  }

  // The runtime's own memory is gone after a restart; agentui's is not,
  // and the runner in server.mjs restores the thread from it. The page
  // is left first (a page talking to a server that is down logs errors)
  // and loaded again after.
  const restartAndReload = async (page) => {
    const url = page.url();
    await page.goto('about:blank');
    const port = new URL(site.url).port;
    await stop(site);
    site = await startSite(port);
    await page.goto(url);
  };

  test('with history: after a restart of the runtime, a reload restores the thread from agentui', () =>
    withPage(`${site.url}/?history=1&thread=${randomUUID()}`, async (page) => {
      await send(page, 'hello');
      await reply(page, 'You said: hello');
      await restartAndReload(page);
      await reply(page, 'You said: hello');
      assert.deepEqual(await context(page), ['user:hello', 'assistant:You said: hello', 'user:/context']);
    }));

  test('with history: after a restart of the runtime, a pending approval comes back', () =>
    withPage(`${site.url}/?history=1&thread=${randomUUID()}`, async (page) => {
      await send(page, 'delete notes.txt');
      await page.getByTestId('approve').waitFor();
      await restartAndReload(page);
      await page.getByTestId('approve').click();
      await reply(page, 'Deleted notes.txt.');
    }));
});

// ------------------------------------------- useChat on a Vite dev server

// A useChat page (ai@6) served by its own dev server, as an app's
// developer runs it: through Vite's proxy (/api on the page's origin),
// and cross-origin (agentui on another port, -cors-origins). The page
// never loads agentui's page: its browser gets its scope with its first
// API request, and reload, regenerate, edit, resume and a second tab
// behave as on agentui's own page.
describe('useChat (ai@6) on a Vite dev server', () => {
  const servers = {};
  before(async () => {
    servers.proxy = await start('node', [join(KITS, 'usechat', 'dev.mjs')], { env: { AGENTUI: agentui.url, NAME: 'usechat (proxy)' } });
    servers.page = await start('node', [join(KITS, 'usechat', 'dev.mjs')], { env: { AGENTUI: '', NAME: 'usechat (cross-origin)' } });
    servers.api = await start(BIN, ['-addr', '127.0.0.1:0', '-demo-delay', '10ms', '-cors-origins', servers.page.url]);
  });
  after(async () => {
    for (const s of Object.values(servers)) await stop(s);
  });

  const modes = {
    'through the dev server proxy': () => `${servers.proxy.url}/`,
    'cross-origin with -cors-origins': () => `${servers.page.url}/?api=${servers.api.url.replace('127.0.0.1', 'localhost')}`,
  };
  const ready = (page) => page.locator('[data-testid=chat][data-status=ready]').waitFor();
  const shown = (page) => page.$$eval('[data-role]', (els) => els.map((e) => `${e.dataset.role}:${e.querySelector('.text')?.innerText.trim()}`));
  async function send(page, text) {
    await page.getByTestId('input').fill(text);
    await page.getByTestId('send').click();
  }
  // reply waits for the last message to be the assistant's with text, and
  // the chat idle.
  async function reply(page, text) {
    await page.waitForFunction((t) => {
      const msgs = document.querySelectorAll('[data-role]');
      const last = msgs[msgs.length - 1];
      return last?.dataset.role === 'assistant' && last.innerText.includes(t) && document.querySelector('[data-testid=chat]')?.dataset.status === 'ready';
    }, text);
    return (await shown(page)).at(-1);
  }
  const context = async (page) => modelSaw((await reply(page, ']')).slice('assistant:'.length));
  async function noError(page) {
    assert.equal(await page.getByTestId('error').count(), 0, 'the page shows an error');
  }

  // The pairing that keeps nothing: the page on localhost, agentui called
  // as 127.0.0.1 (what it prints), two sites, so the browser keeps the
  // scope cookie to itself. The page is told (Agentui-Scope: none) and
  // says so; after a reload nothing is stored, and the error it shows for
  // the refused resume is agentui's sentence, not its JSON.
  test('two sites (the page on localhost, agentui as 127.0.0.1): the page says nothing is kept, and shows errors as sentences', () =>
    withPage(
      `${servers.page.url}/?api=${servers.api.url}`,
      async (page) => {
        assert.match(servers.page.url, /^http:\/\/localhost:/);
        assert.match(servers.api.url, /^http:\/\/127\.0\.0\.1:/);
        await ready(page);
        await send(page, 'hello');
        await reply(page, 'You said: hello');
        await page.getByTestId('not-kept').waitFor();
        await page.reload();
        const error = page.getByTestId('error');
        await error.waitFor();
        const text = await error.textContent();
        assert.ok(!/[{}"]/.test(text), `a sentence, not JSON: ${text}`);
        assert.ok(text.length > 10, `a sentence: ${text}`);
        assert.deepEqual(await shown(page), [], 'nothing was kept');
        // The browser logs the refused reload requests (404) itself.
        const found = problems.splice(0).filter((p) => !/status of 404 \(Not Found\)/.test(p));
        problems.push(...found);
      },
      'useChat on two sites',
    ));

  for (const [mode, home] of Object.entries(modes)) {
    const run = (fn) => withPage(home(), async (page) => (await ready(page), fn(page)), `useChat ${mode}`);

    test(`${mode}: a reload shows the chat, and the model still has it`, () =>
      run(async (page) => {
        await send(page, 'hello');
        await reply(page, 'You said: hello');
        await page.reload();
        await ready(page);
        assert.deepEqual(await shown(page), ['user:hello', 'assistant:You said: hello']);
        await send(page, '/context');
        assert.deepEqual(await context(page), ['user:hello', 'assistant:You said: hello', 'user:/context']);
        await noError(page);
      }));

    test(`${mode}: regenerate replaces the reply`, () =>
      run(async (page) => {
        await send(page, 'hello');
        await reply(page, 'You said: hello');
        await page.getByTestId('regenerate').click();
        await page.locator('[data-testid=chat][data-status=submitted], [data-testid=chat][data-status=streaming]').first().waitFor().catch(() => {});
        await reply(page, 'You said: hello');
        await page.reload();
        await ready(page);
        assert.deepEqual(await shown(page), ['user:hello', 'assistant:You said: hello']);
        await send(page, '/context');
        assert.deepEqual(await context(page), ['user:hello', 'assistant:You said: hello', 'user:/context']);
        await noError(page);
      }));

    test(`${mode}: editing a message replaces it and what followed`, () =>
      run(async (page) => {
        await send(page, 'one');
        await reply(page, 'You said: one');
        await send(page, 'two');
        await reply(page, 'You said: two');
        await page.getByTestId('edit').first().click();
        await page.getByTestId('edit-input').fill('three');
        await page.getByTestId('edit-save').click();
        await page.waitForFunction(() => document.querySelectorAll('[data-role]').length === 2);
        await reply(page, 'You said: three');
        await page.reload();
        await ready(page);
        assert.deepEqual(await shown(page), ['user:three', 'assistant:You said: three']);
        await noError(page);
      }));

    test(`${mode}: a reload mid-reply resumes it`, () =>
      run(async (page) => {
        await send(page, 'think: wait 2000 ms');
        await page.locator('[data-testid=chat][data-status=streaming]').waitFor();
        await page.reload();
        await page.locator('[data-role=assistant]').filter({ hasText: 'done' }).waitFor();
        await ready(page);
        assert.deepEqual(await shown(page), ['user:think: wait 2000 ms', 'assistant:done']);
        await noError(page);
      }));

    // stop() only aborts the fetch; sending again stops the reply on the
    // server, which keeps what it had as stopped, and answers at once.
    test(`${mode}: stop mid-stream then send`, () =>
      run(async (page) => {
        await send(page, 'think: wait 5000 ms');
        await page.locator('[data-testid=chat][data-status=streaming]').waitFor();
        await page.getByTestId('stop').click();
        await ready(page);
        await send(page, 'hello');
        await reply(page, 'You said: hello');
        const want = ['user:think: wait 5000 ms', 'assistant:', 'user:hello', 'assistant:You said: hello'];
        assert.deepEqual(await shown(page), want);
        await noError(page);
        await page.reload();
        await ready(page);
        assert.deepEqual(await shown(page), want);
        await send(page, '/context');
        assert.deepEqual((await context(page)).slice(-3), ['user:hello', 'assistant:You said: hello', 'user:/context']);
        await noError(page);
      }));

    test(`${mode}: a message sent from a second tab while a reply runs shows that reply`, () =>
      run(async (page) => {
        await send(page, 'hello');
        await reply(page, 'You said: hello');
        const other = await browser.context.newPage();
        const otherProblems = [];
        watch(other, otherProblems, 'second tab');
        try {
          await other.goto(page.url());
          await ready(other);
          await send(page, 'think: wait 3000 ms');
          await page.locator('[data-testid=chat][data-status=streaming]').waitFor();
          await send(other, 'hello from the second tab');
          await other.getByTestId('notice').waitFor();
          await other.locator('[data-role=assistant]').filter({ hasText: 'done' }).waitFor();
          await reply(page, 'done');
          const want = ['user:hello', 'assistant:You said: hello', 'user:think: wait 3000 ms', 'assistant:done'];
          assert.deepEqual(await shown(other), want);
          // The refusal itself (409) is the browser's console line; nothing else.
          const unexpected = otherProblems.filter((p) => !p.includes('status of 409'));
          assert.deepEqual(unexpected, [], 'the second tab logged errors or warnings');
          await page.reload();
          await ready(page);
          assert.deepEqual(await shown(page), want);
        } finally {
          await other.close();
        }
      }));
  }
});
