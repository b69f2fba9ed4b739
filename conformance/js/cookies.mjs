// A cookie jar for Node's fetch, which (unlike a browser) keeps no
// cookies. The agentui server scopes conversations by a cookie, which it
// issues with the page (an API request without one is served without
// history), so a client first loads the page, as a browser does, and
// then sends back what it was given. Each flow has a jar of its own
// (flows.mjs), so each is a visitor of its own. COOKIE_FILE, when set,
// keeps the jar across processes (to continue a chat after a server
// restart).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { flow } from './flows.mjs';

const file = process.env.COOKIE_FILE;
const saved = file && existsSync(file) ? Object.entries(JSON.parse(readFileSync(file, 'utf8'))) : [];
const processJar = new Map(saved);

// jarOf is the running flow's jar, or the process's outside a flow.
function jarOf() {
  const f = flow();
  if (!f) return processJar;
  f.jar ??= new Map(saved);
  return f.jar;
}

export async function cookieFetch(input, init = {}) {
  const jar = jarOf();
  if (!jar.size) keep(await fetch(new URL('/', typeof input === 'string' || input instanceof URL ? input : input.url)));
  const headers = new Headers(init.headers);
  if (jar.size) headers.set('cookie', [...jar].map(([k, v]) => `${k}=${v}`).join('; '));
  return keep(await fetch(input, { ...init, headers }));
}

// cookieHeader is the Cookie header a request to base sends (the page is
// loaded first when the jar is empty), for clients that are not fetch: a
// WebSocket handshake.
export async function cookieHeader(base) {
  const jar = jarOf();
  if (!jar.size) keep(await fetch(new URL('/', base)));
  return [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
}

// keep stores the cookies a response sets.
function keep(res) {
  const jar = jarOf();
  for (const c of res.headers.getSetCookie()) {
    const [pair] = c.split(';');
    const i = pair.indexOf('=');
    jar.set(pair.slice(0, i).trim(), pair.slice(i + 1).trim());
  }
  if (file) writeFileSync(file, JSON.stringify(Object.fromEntries(jar)));
  return res;
}

// The server keeps history: HISTORY=1 (set by the Go driver).
export const history = process.env.HISTORY === '1';
