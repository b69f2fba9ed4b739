// The browser test of what the chat page shows after something went wrong:
// a chat the server lost in a restart, a reply whose server was killed
// (Redis keeps the chat and the run's log), a model that failed before or
// after its first word, a denied tool call, a stopped reply. Each state is
// made live, then the page is reloaded: what a person sees must be the
// same (FAILURES, one table), in both protocols, on a desktop and on a
// phone (the cases that wait out a lock TTL and show nothing the screen
// changes, on a desktop only). The restarts are real: the agentui binary is killed and started
// again on the same address (memory: the chats are gone; Redis: the chat
// and the dead run's log are kept, and a new process finishes the run).
//
//   AGENTUI_BIN=/path/to/agentui node e2e/failures.test.mjs    (make e2e does this)
//
// Redis: a redis-server of its own on a free port (Debian: apt-get install
// redis-server). Without Chromium the test is skipped, except under CI.
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { executable, kill, launch, requireChromium, restart, start, stop, watch } from './harness.mjs';

const BIN = process.env.AGENTUI_BIN;
requireChromium('failures');
if (!BIN || !executable(BIN)) {
  console.error('failures: set AGENTUI_BIN to a built agentui binary (make e2e does).');
  process.exit(2);
}

// ---------------------------------------------------------------- servers

// A fixed secret keeps the browser's scope cookie valid across a restart,
// as a deployment that sets -secret does: a restarted in-memory server
// then knows the browser and none of its chats.
const SECRET = randomBytes(32).toString('hex');
// How long a dead process's run holds its chat in Redis: long enough that
// a Retry right after the restart finds it held (the lock was extended at
// most a third of it before the kill), short enough to wait for.
const LOCK_TTL = '9s';

// Each server's scope cookie is its own: cookies do not tell ports apart,
// so the servers that sign them alike (memory and redis, one secret) are
// called as 127.0.0.1 and the one with a secret of its own (plain) as
// localhost.
const servers = {}; // memory (-secret), plain (memory, no -secret), redis; a and b: two replicas behind proxy
const url = (name) => (name === 'plain' ? servers.plain.url.replace('127.0.0.1', 'localhost') : servers[name].url);
let redis; // { proc, port, dir }

async function freePort() {
  const l = net.createServer();
  await new Promise((ok) => l.listen(0, '127.0.0.1', ok));
  const { port } = l.address();
  await new Promise((ok) => l.close(ok));
  return port;
}

// startRedis runs a redis-server of the test's own (no persistence) and
// waits until it answers PING.
async function startRedis() {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'agentui-e2e-redis-'));
  const proc = spawn('redis-server', ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
  const failed = new Promise((_, fail) => proc.once('error', (e) => fail(new Error(`redis-server: ${e.message} (Debian: apt-get install redis-server)`))));
  const deadline = Date.now() + 10000;
  for (;;) {
    const pong = await Promise.race([failed, ping(port)]);
    if (pong) return { proc, port, dir };
    if (Date.now() > deadline) throw new Error('redis-server did not answer within 10 s');
    await new Promise((ok) => setTimeout(ok, 50)); // polling a process that is starting
  }
}

function ping(port) {
  return new Promise((ok) => {
    const c = net.connect(port, '127.0.0.1');
    c.once('error', () => ok(false));
    c.once('connect', () => c.write('PING\r\n'));
    c.once('data', (d) => {
      c.destroy();
      ok(d.toString().startsWith('+PONG'));
    });
  });
}

const agentui = (...extra) => start(BIN, ['-addr', '127.0.0.1:0', '-demo-delay', '20ms', ...extra]);

before(async () => {
  redis = await startRedis();
  servers.memory = await agentui('-secret', SECRET);
  servers.plain = await agentui();
  servers.redis = await agentui('-secret', SECRET, '-history', `redis://127.0.0.1:${redis.port}/0`, '-lock-ttl', LOCK_TTL, '-demo-delay', '60ms');
  const replica = () => agentui('-secret', SECRET, '-history', `redis://127.0.0.1:${redis.port}/1`, '-lock-ttl', '3s', '-demo-delay', '60ms', '-shutdown-grace', '3s');
  servers.a = await replica();
  servers.b = await replica();
  proxy = await roundRobin(['a', 'b']);
});

after(async () => {
  proxy?.server.close();
  for (const s of Object.values(servers)) await stop(s);
  if (redis) {
    redis.proc.kill('SIGKILL');
    rmSync(redis.dir, { recursive: true, force: true });
  }
});

// roundRobin is a load balancer of the test's own on loopback: each
// request goes to the next of the named servers, or to the other when
// that one refuses the connection (it is shutting down or gone). last is
// the server that took the last request for a reply.
let proxy; // { url, server, last }
async function roundRobin(names) {
  const p = { last: null };
  let next = 0;
  p.server = http.createServer((req, res) => {
    const order = [names[next % names.length], names[(next + 1) % names.length]];
    next++;
    const body = [];
    req.on('data', (c) => body.push(c));
    req.on('end', () => {
      const forward = (i) => {
        const name = order[i];
        const up = new URL(servers[name].url);
        const out = http.request({ host: up.hostname, port: up.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
          if (req.method === 'POST' && /^\/api\/(chat|agui)$/.test(new URL(req.url, 'http://x').pathname)) p.last = name;
          res.writeHead(answer.statusCode, answer.headers);
          answer.pipe(res);
          res.on('close', () => answer.destroy());
        });
        out.on('error', () => {
          if (i + 1 < order.length && !res.headersSent) forward(i + 1);
          else res.destroy();
        });
        out.end(Buffer.concat(body));
      };
      forward(0);
    });
  });
  await new Promise((ok) => p.server.listen(0, '127.0.0.1', ok));
  p.url = `http://127.0.0.1:${p.server.address().port}`;
  return p;
}

// bounce kills a server (SIGKILL, as a crash does) and starts it again on
// its address.
async function bounce(name) {
  await kill(servers[name]);
  servers[name] = await restart(servers[name]);
}

// ---------------------------------------------------------------- browsers

const DEVICES = {
  desktop: { viewport: { width: 1100, height: 800 } },
  phone: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 },
};
const PROTOCOLS = { vercel: 'useChat', agui: 'AG-UI' };

const problems = [];
afterEach(() => {
  // The browser logs the requests these tests make fail: a server killed
  // (net::ERR_…), a chat it no longer has (404), a refused message (409),
  // and @ag-ui/client the body of a 409. Nothing else may be logged.
  const found = problems.splice(0).filter((p) => !ALLOWED.test(p));
  assert.deepEqual(found, [], 'the page logged errors or warnings');
});
const ALLOWED =
  /console\.error: (Failed to load resource: (net::ERR_\w+|the server responded with a status of (409 \(Conflict\)|404 \(Not Found\)))|.*HTTP 409: \{"error":"a reply is still being produced for this chat","code":"busy"\})/;

// ---------------------------------------------------------------- helpers

// A reply of 60 words: at 60 ms a word (the Redis server's -demo-delay)
// it streams for seconds, long enough to cut.
const SLOW = 'please say back slowly: ' + Array.from({ length: 60 }, (_, i) => `word${i + 1}`).join(' ');
// A reply long enough to stop after its first words (20 ms a word).
const STOPPABLE = 'say this back: ' + Array.from({ length: 100 }, (_, i) => `w${i + 1}`).join(' ');

const CONNECTION_LOST = 'The connection to the server was lost before the reply was finished.';
const HELD = /still finishing the earlier reply in this chat/;

function helpers(page) {
  const h = {
    page,
    input: () => page.getByTestId('input'),
    assistants: () => page.locator('[data-testid=message][data-role=assistant]'),
    box: (text) => page.getByTestId('error').filter({ hasText: text }),
    chatId: () => new URL(page.url()).searchParams.get('chat'),
    onPhone: () => page.getByTestId('menu').isVisible(),
    async open(url, protocol) {
      await page.goto(`${url}/${protocol === 'agui' ? '?protocol=agui' : ''}`);
      await page.getByTestId('empty').waitFor();
      await page.locator(`[data-testid=app][data-protocol=${protocol}]`).waitFor();
    },
    async send(text) {
      await h.input().fill(text);
      await h.input().press('Enter');
      await page.locator('[data-testid=message][data-role=user]').last().filter({ hasText: text.slice(0, 40) }).waitFor();
    },
    // settled: no reply in progress (Send is back), and drawn.
    async settled() {
      await page.getByTestId('send').waitFor();
      await page.locator('[data-testid=composer][data-status=streaming], [data-testid=composer][data-status=submitted]').waitFor({ state: 'detached' });
      await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done, 0)))));
    },
    // oneText waits until the last reply shows one text: a page whose
    // reply was run again after its server died shows the step it lost
    // beside the new one until the reply ends (AI SDK 6 chunks), then the
    // stored reply.
    async oneText() {
      await page.waitForFunction(() => {
        const a = [...document.querySelectorAll('[data-testid=message][data-role=assistant]')].at(-1);
        return a?.querySelectorAll('[data-testid=text]').length === 1;
      });
    },
    async reply(text) {
      await h.assistants().last().getByTestId('text').last().filter({ hasText: text }).waitFor();
      await h.settled();
    },
    // reload reloads the page and waits until it has what it will show:
    // the answer to its resume (useChat) or connect (AG-UI), or the notice
    // that the server no longer has the chat (then there is nothing to
    // resume).
    async reload() {
      const resumed = page
        .waitForResponse((r) => /^\/api\/(chat\/[^/]+\/stream|agui\/connect)$/.test(new URL(r.url()).pathname))
        .then((r) => r.finished());
      const lost = page.getByTestId('unknown-chat').waitFor();
      resumed.catch(() => {});
      lost.catch(() => {});
      await page.reload();
      await Promise.any([resumed, lost]);
      await h.settled();
    },
    // inDrawer runs an action on the chat list, opening it first on a phone.
    async inDrawer(action) {
      if (await h.onPhone()) {
        await page.getByTestId('menu').click();
        await page.waitForFunction(() => document.querySelector('[data-testid=sidebar]').getBoundingClientRect().left >= 0);
      }
      try {
        return await action();
      } finally {
        if (await h.onPhone()) {
          await page.locator('.scrim').click({ position: { x: 370, y: 400 } });
          await page.waitForFunction(() => document.querySelector('[data-testid=sidebar]').getBoundingClientRect().right <= 0);
        }
      }
    },
    heading: async () => (await page.getByTestId('chat-heading').textContent()).trim(),
    // seen records every sentence the page's error and notice boxes show
    // from now on (a notice may be replaced within a second).
    async watchBoxes() {
      await page.evaluate(() => {
        window.__boxes = [];
        const note = () => {
          for (const el of document.querySelectorAll('[data-testid=error-text]')) {
            if (window.__boxes.at(-1) !== el.textContent) window.__boxes.push(el.textContent);
          }
        };
        window.__boxObserver?.disconnect();
        window.__boxObserver = new MutationObserver(note);
        window.__boxObserver.observe(document.body, { subtree: true, childList: true, characterData: true });
      });
    },
    seenBoxes: () => page.evaluate(() => window.__boxes),
    // shows is what a person sees of the chat: the heading, each message
    // (its text, its "failed" mark and note, its tool calls with their
    // state and the reason a denial gave, its usage line), a message left
    // without a reply, and the error and notice boxes with their buttons.
    shows: () =>
      page.evaluate(() => ({
        heading: document.querySelector('[data-testid=chat-heading]').textContent.trim(),
        messages: [...document.querySelectorAll('[data-testid=message]')].map((el) => ({
          role: el.dataset.role,
          failed: el.querySelector('[data-testid=failed]')?.textContent ?? null,
          text: [...el.querySelectorAll('[data-testid=text]')].map((t) => t.textContent.trim()).join(' | '),
          tools: [...el.querySelectorAll('[data-testid=tool]')].map((t) => ({
            name: t.dataset.toolName,
            state: t.dataset.state,
            label: t.querySelector('[data-testid=tool-state]').textContent,
            line: t.querySelector('[data-testid=tool-summary]').innerText.replace(/\s+/g, ' ').trim(),
            reason: [...t.querySelectorAll('[data-testid=approval-reason]')].map((r) => r.textContent),
          })),
          usage: el.querySelector('[data-testid=usage]')?.textContent ?? null,
        })),
        noReply: !!document.querySelector('[data-testid=no-reply]'),
        boxes: [...document.querySelectorAll('[data-testid=error], [data-testid=unknown-chat]')].map((b) => ({
          kind: b.dataset.testid,
          text: b.querySelector('[data-testid=error-text]').textContent,
          retry: !!b.querySelector('[data-testid=retry]'),
          newChat: !!b.querySelector('[data-testid=start-new-chat]'),
        })),
      })),
  };
  return h;
}

// ------------------------------------------------------------------ table

// FAILURES: each state a failure leaves, how it is made live (make), and
// what it must show (expect). Live and after a reload the page must show
// the same; a lost chat's conversation itself is what the server lost, so
// there what the page says is compared (heading and notice), not the
// messages the page left open still holds.
const FAILURES = [
  {
    state: 'lost chat (memory, restarted)',
    server: 'memory',
    async make(h) {
      await h.send('remember this chat');
      await h.reply('You said: remember this chat');
      await bounce('memory');
      await h.send('are you still there?');
      await h.page.getByTestId('unknown-chat').waitFor();
      await h.settled();
    },
    compare: (s) => ({ heading: s.heading, boxes: s.boxes }),
    expect(s) {
      assert.equal(s.heading, 'hello', 'the heading keeps the chat\'s title');
      assert.equal(s.boxes.length, 1);
      assert.equal(s.boxes[0].kind, 'unknown-chat');
      assert.match(s.boxes[0].text, /^This chat is no longer on the server/);
      assert.ok(s.boxes[0].newChat, 'a new chat is offered');
    },
  },
  {
    state: 'dead replica (Redis, killed mid-reply)',
    server: 'redis',
    // What a re-driven reply shows does not depend on the screen, and
    // each run waits out a lock TTL: on a desktop only.
    desktopOnly: true,
    async make(h) {
      const replies = await h.assistants().count();
      await h.send(SLOW);
      await h.assistants().nth(replies).getByTestId('text').filter({ hasText: /word3\b/ }).waitFor();
      await kill(servers.redis);
      await h.box(CONNECTION_LOST).waitFor();
      servers.redis = await restart(servers.redis);
      await h.box('The server can be reached again.').waitFor({ timeout: 20000 });
      await h.box('The server can be reached again.').getByTestId('retry').click();
      // The server holds the dead run's chat until its lock lapses; then
      // it runs the reply again from its last complete step, and the
      // page shows the reply whole, once.
      await h.assistants().last().getByTestId('text').filter({ hasText: /word60$/ }).waitFor({ timeout: 40000 });
      await h.oneText();
      await h.settled();
    },
    expect(s) {
      const last = s.messages.at(-1);
      assert.equal(last.role, 'assistant');
      assert.equal(last.text, 'You said: ' + SLOW, 'the reply whole, once');
      assert.ok(!last.failed, 'the reply is not marked failed');
      assert.deepEqual(s.boxes, []);
    },
  },
  {
    state: 'model error before any output',
    server: 'memory',
    async make(h) {
      await h.send('fail at once');
      await h.box('The model could not be reached').waitFor();
      await h.settled();
    },
    expect(s) {
      const last = s.messages.at(-1);
      assert.deepEqual([last.role, last.text, last.failed], ['assistant', '', 'This reply failed before it began.']);
      assert.deepEqual(s.boxes, [{ kind: 'error', text: 'The model could not be reached: try again in a moment.', retry: true, newChat: false }]);
    },
  },
  {
    state: 'model error after output',
    server: 'memory',
    async make(h) {
      await h.send('fail');
      await h.box('An error occurred.').waitFor();
      await h.settled();
    },
    expect(s) {
      const last = s.messages.at(-1);
      assert.deepEqual([last.role, last.text, last.failed], ['assistant', 'Working on it', 'This reply failed before it was finished.']);
      assert.deepEqual(s.boxes, [{ kind: 'error', text: 'An error occurred.', retry: true, newChat: false }]);
    },
  },
  {
    state: 'denied tool call',
    server: 'memory',
    async make(h) {
      await h.send('delete /tmp/table.txt');
      const tool = h.assistants().last().locator('[data-testid=tool][data-state=approval-requested]');
      await tool.waitFor();
      await h.settled();
      await tool.getByTestId('deny-reason').fill('not this one');
      await tool.getByTestId('deny').click();
      await h.reply('Okay, I did not delete /tmp/table.txt (reason: not this one).');
    },
    expect(s) {
      const last = s.messages.at(-1);
      assert.equal(last.failed, null);
      assert.equal(last.tools.length, 1);
      const [tool] = last.tools;
      assert.deepEqual([tool.state, tool.label], ['output-denied', 'denied']);
      assert.deepEqual(tool.reason, ['Reason: not this one'], 'the reason shows once, under the call');
      assert.ok(!tool.line.includes('not this one'), `the reason is not in the call's line too: ${tool.line}`);
      assert.match(last.usage, /^\d+ input · \d+ output tokens · agentui-demo$/);
      assert.deepEqual(s.boxes, []);
    },
  },
  {
    state: 'stopped reply',
    server: 'memory',
    async make(h) {
      const replies = await h.assistants().count();
      await h.send(STOPPABLE);
      await h.assistants().nth(replies).getByTestId('text').filter({ hasText: /\bw2\b/ }).waitFor();
      await h.page.getByTestId('stop').click();
      await h.settled();
    },
    expect(s) {
      const last = s.messages.at(-1);
      assert.equal(last.role, 'assistant');
      assert.match(last.text, /^You said: say this back: w1 w2/);
      assert.ok(!last.text.includes('w100'), 'the reply stopped');
      assert.equal(last.failed, null, 'a stopped reply is not a failed one');
      assert.deepEqual(s.boxes, []);
    },
  },
];

// ------------------------------------------------------------------ tests

for (const [device, options] of Object.entries(DEVICES)) {
  describe(`on a ${device}`, () => {
    let browser;
    let h;
    before(async () => {
      browser = await launch({ timezoneId: 'Europe/Paris', locale: 'en-US', ...options });
      browser.context.setDefaultTimeout(15000);
      const page = browser.context.pages()[0] ?? (await browser.context.newPage());
      watch(page, problems, device);
      h = helpers(page);
    });
    after(() => browser?.close());

    for (const [protocol, name] of Object.entries(PROTOCOLS)) {
      for (const row of FAILURES) {
        if (row.desktopOnly && device !== 'desktop') continue;
        test(`${device}, ${name}: ${row.state} shows the same live and after a reload`, async () => {
          await h.open(url(row.server), protocol);
          await h.send('hello');
          await h.reply('You said: hello');
          await row.make(h);
          const live = await h.shows();
          row.expect(live);
          await h.reload();
          const reloaded = await h.shows();
          const compare = row.compare ?? ((s) => s);
          assert.deepEqual(compare(reloaded), compare(live), 'after the reload the page shows what it showed live');
          row.expect(reloaded);
        });
      }

      // On a desktop only: what the handover shows does not depend on
      // the screen, and two replicas restarted per run cost seconds.
      if (device === 'desktop') test(`${device}, ${name}: a replica that shuts down mid-reply hands it over: one reply, whole, with no error`, async () => {
        await h.open(proxy.url, protocol);
        await h.send('hello');
        await h.reply('You said: hello');
        const replies = await h.assistants().count();
        await h.watchBoxes();
        await h.send(SLOW);
        await h.assistants().nth(replies).getByTestId('text').filter({ hasText: /word3\b/ }).waitFor();
        // SIGTERM to the replica producing the reply: its grace (3 s) is
        // shorter than the reply, so it hands the run over, and the other
        // replica runs the step it was streaming again.
        const name = proxy.last;
        const other = name === 'a' ? 'b' : 'a';
        const logged = servers[other].log().length;
        const exited = kill(servers[name], 'SIGTERM');
        await h.assistants().nth(replies).getByTestId('text').filter({ hasText: /word60$/ }).waitFor({ timeout: 30000 });
        await h.oneText();
        await h.settled();
        await exited;
        assert.match(servers[name].log(), /handing the runs in progress over/, 'the replica that shut down handed its run over');
        assert.match(servers[other].log().slice(logged), /goes on here/, 'the other replica went on with it');
        servers[name] = await restart(servers[name]);
        const s = await h.shows();
        const last = s.messages.at(-1);
        assert.equal(last.role, 'assistant');
        assert.equal(last.text, 'You said: ' + SLOW, 'the reply whole, once');
        assert.ok(!last.failed, 'the reply is not marked failed');
        assert.deepEqual(s.boxes, []);
        assert.deepEqual(await h.seenBoxes(), [], 'no error or notice showed at any time');
        await h.reload();
        assert.equal((await h.shows()).messages.at(-1).text, 'You said: ' + SLOW, 'stored as shown');
      });

      test(`${device}, ${name}: a reload after a restart that lost the chat says so, keeps its title and starts a new chat with the next message`, async () => {
        await h.open(url('memory'), protocol);
        await h.send('a chat to lose');
        await h.reply('You said: a chat to lose');
        await h.page.getByTestId('chat-heading').filter({ hasText: 'a chat to lose' }).waitFor();
        const old = h.chatId();
        await bounce('memory');
        await h.reload();
        const notice = h.page.getByTestId('unknown-chat');
        assert.match(await notice.getByTestId('error-text').textContent(), /^This chat is no longer on the server/);
        assert.equal(await notice.getByTestId('start-new-chat').textContent(), 'Start a new chat');
        assert.equal(await h.heading(), 'a chat to lose', 'not "New chat"');
        assert.equal(await h.page.getByTestId('empty').count(), 0, 'not an empty new chat');
        assert.equal(h.chatId(), old);
        // The next message starts a new chat, rather than a second chat
        // under the old id.
        await h.send('a fresh start');
        await h.page.waitForURL((u) => u.searchParams.get('chat') !== old);
        await h.reply('You said: a fresh start');
        assert.equal(await h.page.getByTestId('unknown-chat').count(), 0);
        const status = await h.page.evaluate(async (id) => (await fetch('/api/chat/' + encodeURIComponent(id))).status, old);
        assert.equal(status, 404, 'nothing was stored under the old id');
      });

      test(`${device}, ${name}: without a secret, a reload after a restart says the earlier chats are gone`, async () => {
        await h.open(url('plain'), protocol);
        await h.send('a chat the server forgets');
        await h.reply('You said: a chat the server forgets');
        await h.inDrawer(() => h.page.locator(`[data-testid=chat-item][data-chat-id="${h.chatId()}"]`).waitFor());
        await bounce('plain');
        await h.reload();
        await h.page.getByTestId('unknown-chat').waitFor();
        await h.inDrawer(async () => {
          const note = h.page.getByTestId('chats-gone');
          await note.waitFor();
          assert.equal(await note.textContent(), 'The server no longer knows this browser (it was restarted), so your earlier chats are gone.');
          assert.equal(await h.page.getByText('No chats yet.').count(), 0);
        });
        await h.page.getByTestId('start-new-chat').click();
        await h.page.getByTestId('empty').waitFor();
      });

      test(`${device}, ${name}: a page left open over a restart that lost its chats keeps its heading and says the chats are gone`, async () => {
        await h.open(url('memory'), protocol);
        await h.send('keep my title');
        await h.reply('You said: keep my title');
        await h.page.getByTestId('chat-heading').filter({ hasText: 'keep my title' }).waitFor();
        await kill(servers.memory);
        await h.send('is it down?');
        await h.box('your message was not sent').waitFor();
        servers.memory = await restart(servers.memory);
        await h.box('The server can be reached again.').waitFor({ timeout: 20000 });
        // The list has loaded again from the restarted server.
        await h.inDrawer(async () => {
          await h.page.getByTestId('chats-gone').filter({ hasText: 'Your earlier chats are no longer on the server.' }).waitFor();
          assert.equal(await h.page.getByText('No chats yet.').count(), 0);
        });
        assert.equal(await h.heading(), 'keep my title', 'the heading above the conversation still names it');
        assert.ok((await h.page.getByTestId('text').filter({ hasText: 'You said: keep my title' }).count()) === 1, 'the conversation still shows');
      });

      // On a desktop only: the notice is the one the phone's other
      // failure tests show, and each run waits out a lock TTL.
      if (device === 'desktop') test(`${device}, ${name}: Retry after a killed server held the reply says so (not "another tab") and keeps the unsent message`, async () => {
        await h.open(url('redis'), protocol);
        const replies = await h.assistants().count();
        await h.send(SLOW);
        await h.assistants().nth(replies).getByTestId('text').filter({ hasText: /word3\b/ }).waitFor();
        await kill(servers.redis);
        await h.box(CONNECTION_LOST).waitFor();
        await h.send('are you back?');
        await h.box('your message was not sent').waitFor();
        servers.redis = await restart(servers.redis);
        await h.box('The server can be reached again. Retry to send your message.').waitFor({ timeout: 20000 });
        await h.watchBoxes();
        await h.box('The server can be reached again.').getByTestId('retry').click();
        await h.page.getByTestId('error-text').filter({ hasText: HELD }).waitFor();
        assert.equal(await h.input().inputValue(), 'are you back?', 'the message that was not sent is back in the message box');
        // The held reply is run again once the lock lapses, and ends whole.
        await h.assistants().last().getByTestId('text').filter({ hasText: /word60$/ }).waitFor({ timeout: 40000 });
        await h.oneText();
      await h.oneText();
        await h.settled();
        const seen = await h.seenBoxes();
        assert.ok(!seen.some((t) => /another tab/.test(t)), `no other tab was involved: ${JSON.stringify(seen)}`);
        assert.equal(await h.input().inputValue(), 'are you back?', 'the message is still there');
        assert.notEqual(await h.assistants().last().getAttribute('data-failed'), 'true', 'the reply run again is not marked failed');
        assert.equal(await h.assistants().last().getByTestId('text').allTextContents().then((t) => t.join('')), 'You said: ' + SLOW, 'the reply whole, once');
        await h.input().press('Enter');
        await h.reply('You said: are you back?');
      });
    }
  });
}
