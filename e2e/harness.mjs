// What the browser tests share: finding Chromium (skip without it, except
// under CI), starting a process that announces "… listening on <url>" on
// its first stdout line (the agentui binary, a kit's page server),
// killing and restarting it, and launching Debian's Chromium with a fresh
// profile.
import { spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
export const IN_CI = !!process.env.CI && !['0', 'false'].includes(process.env.CI.toLowerCase());

export function executable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

// requireChromium exits the process when there is no Chromium: 0 (skip)
// on a developer's machine, 1 under CI, which must not skip.
export function requireChromium(name) {
  if (executable(CHROMIUM)) return;
  console.log(`${name}: no Chromium at ${CHROMIUM} (install it: apt-get install -y chromium).`);
  if (IN_CI) {
    console.log(`${name}: failing, because CI must run the browser test rather than skip it.`);
    process.exit(1);
  }
  console.log(`${name}: skipping the browser test (it fails instead when CI is set).`);
  process.exit(0);
}

// start runs a server process and waits (up to 30 s) for its first
// stdout line, which must name the URL it listens on. The server it
// returns remembers how it was started, for restart.
export async function start(cmd, args, { env, cwd } = {}) {
  const proc = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d) => (stderr += d));
  const lines = createInterface({ input: proc.stdout });
  const first = await new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`${cmd} did not start within 30 s:\n${stderr}`)), 30000);
    lines.once('line', (line) => {
      clearTimeout(timer);
      ok(line);
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`${cmd} exited (${code}) before listening:\n${stderr}`));
    });
  });
  const m = first.match(/listening on (http:\/\/\S+)/);
  if (!m) throw new Error(`unexpected first line from ${cmd}: ${first}`);
  lines.on('line', () => {}); // keep draining stdout
  return { proc, url: m[1], log: () => stderr, cmd, args, env, cwd };
}

// kill ends a server at once, as a crash would (SIGKILL), or with
// another signal (SIGTERM: a graceful shutdown), and waits until it has
// exited.
export async function kill(server, signal = 'SIGKILL') {
  const proc = server.proc;
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((ok) => proc.once('exit', ok));
  proc.kill(signal);
  await exited;
}

// restart starts a server that was killed again, with the same
// arguments on the same address (its URL stays), and returns it.
export async function restart(server) {
  const addr = new URL(server.url).host;
  const args = [...server.args];
  const i = args.indexOf('-addr');
  if (i >= 0) args[i + 1] = addr;
  else args.push('-addr', addr);
  const again = await start(server.cmd, args, { env: server.env, cwd: server.cwd });
  if (again.url !== server.url) throw new Error(`restarted on ${again.url}, not ${server.url}`);
  return again;
}

// stop ends a process started by start: SIGTERM, SIGKILL after 5 s.
export async function stop(server) {
  const proc = server?.proc;
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((ok) => proc.once('exit', ok));
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

// launch starts Chromium on a fresh profile (Playwright refuses
// --user-data-dir among launch() args: a persistent context on a new
// temporary directory is the same thing). close() removes the profile.
export async function launch(options = {}) {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'agentui-e2e-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    ...options,
  });
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

// watch records a page's console errors and warnings and its uncaught
// errors into problems.
export function watch(page, problems, label = '') {
  const prefix = label ? `${label}: ` : '';
  page.on('console', (msg) => {
    if (msg.type() === 'error' || msg.type() === 'warning') {
      const where = msg.location()?.url ? ` (${msg.location().url})` : '';
      problems.push(`${prefix}console.${msg.type()}: ${msg.text()}${where}`);
    }
  });
  page.on('pageerror', (err) => problems.push(`${prefix}page error: ${err.stack || err.message}`));
}
