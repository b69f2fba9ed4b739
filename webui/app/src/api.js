// The server's thread API (GET /api/chats, PATCH and DELETE
// /api/chat/{id}) and how its errors read.

// errorText turns what a failed request said into a sentence: agentui
// answers {"error": "…"}; anything else gets a generic line with the status.
export function errorText(body, status) {
  if (typeof body === 'string' && body.trim().startsWith('{')) {
    try {
      const e = JSON.parse(body).error;
      if (typeof e === 'string' && e) return sentence(e);
    } catch {
      // not JSON after all
    }
  }
  if (typeof body === 'string' && body && body.length < 200 && !body.includes('<')) return sentence(body);
  return status ? `The server answered ${status}.` : 'Something went wrong.';
}

// BUSY_NOTICE is shown when this tab's message was refused because a reply
// is being produced in the chat from elsewhere, and that reply shows.
export const BUSY_NOTICE = 'A reply is being written in this chat from another tab: it shows here.';
// HELD_NOTICE is shown instead when the reply the server still holds
// answers a message this page sent: the reply this page lost (its server
// went away) is still running, or its server died and the reply is held
// until the server finds that out; it shows here until it ends.
export const HELD_NOTICE = 'The server is still finishing the earlier reply in this chat, or finding out that the server writing it stopped: it shows here until it ends.';
// REFILLED is added to either when the refused message is back in the
// message box.
export const REFILLED = ' Your message was not sent: it is back in the message box, to send when the reply ends.';

// refusalCode is the "code" of an agentui refusal body ({"error": …,
// "code": …}), or '' (uiadapter.CodeBusy, CodeUnknownChat).
export function refusalCode(body) {
  try {
    const code = JSON.parse(body)?.code;
    return typeof code === 'string' ? code : '';
  } catch {
    return '';
  }
}

// isBusy tells whether an error body is the server's 409 for a chat whose
// reply is still being produced elsewhere (another tab, another device).
export const isBusy = (body) => refusalCode(body) === 'busy';

// UNKNOWN_CHAT is code of the 409 for a message that builds on a chat the
// server no longer has (it kept chats in memory and restarted, or the chat
// expired): sending it anyway would start another chat under this id.
export const UNKNOWN_CHAT = 'unknown_chat';
export const UNKNOWN_CHAT_NOTICE =
  'This chat is no longer on the server (it was restarted without keeping its chats, or the chat expired), so nothing more can be added to it.';

// Chats this browser has had replies in, with their last known titles
// (localStorage, newest last, at most KNOWN_MAX): a chat the server
// answers 404 for, or an empty thread, is one it no longer has when the
// browser knew it, and a new one otherwise. (The server cannot tell:
// after a restart without its chats it has never seen either.)
const KNOWN = 'agentui.chats';
const KNOWN_MAX = 500;

function known() {
  try {
    const v = JSON.parse(localStorage.getItem(KNOWN) ?? '{}');
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

function keep(chats) {
  const ids = Object.keys(chats);
  for (const id of ids.slice(0, Math.max(0, ids.length - KNOWN_MAX))) delete chats[id];
  try {
    localStorage.setItem(KNOWN, JSON.stringify(chats));
  } catch {
    // storage full or refused: the page then cannot tell a lost chat from a new one
  }
}

// rememberChat notes that the server has the chat (with its title, when
// given); wasKnown tells whether it had; knownTitle is its last title.
export function rememberChat(id, title) {
  const chats = known();
  const had = chats[id];
  if (had !== undefined && (title === undefined || had === title)) return;
  delete chats[id];
  chats[id] = title ?? had ?? '';
  keep(chats);
}
export const wasKnown = (id) => Object.hasOwn(known(), id);
export const knownTitle = (id) => known()[id] || '';
export function forgetChat(id) {
  const chats = known();
  if (!Object.hasOwn(chats, id)) return;
  delete chats[id];
  keep(chats);
}

// The server says in Agentui-Scope: renewed (and, on the page load, in the
// cookie agentui_scope_renewed) that it no longer knew this browser's
// scope cookie and gave it a new scope: it was restarted without a fixed
// secret, so the chats the browser had are not listed any more.
// onScopeRenewed calls back once that is known (at once if it is).
const RENEWED_COOKIE = 'agentui_scope_renewed';
let renewed = false;
const renewedListeners = new Set();
function scopeRenewed() {
  if (renewed) return;
  renewed = true;
  for (const f of renewedListeners) f();
}
if (typeof document !== 'undefined' && document.cookie.split(/;\s*/).includes(RENEWED_COOKIE + '=1')) {
  // Said once: a reload does not say it again.
  document.cookie = RENEWED_COOKIE + '=; Max-Age=0; Path=/; SameSite=Lax';
  renewed = true;
}
export function onScopeRenewed(f) {
  if (renewed) f();
  renewedListeners.add(f);
  return () => renewedListeners.delete(f);
}
// noteScope reads a response's Agentui-Scope header.
export function noteScope(res) {
  if (res?.headers?.get('agentui-scope') === 'renewed') scopeRenewed();
  return res;
}

// isOffline tells whether a request failed because the server could not be
// reached or the connection broke (fetch's TypeError, whatever the
// browser calls it, or the WebSocket transport's), rather than because the
// server refused it.
export function isOffline(e) {
  if (!e || e.name === 'AbortError') return false;
  if (e.offline) return true;
  const m = String(e.message ?? e);
  return /failed to fetch|networkerror|network error|load failed|network connection was lost|err_connection|input stream|websocket chat network connection/i.test(m);
}

// Sentences for a chat that lost its server: before the reply began (the
// message was not sent) or while it streamed; then once it answers again.
export const OFFLINE_SEND = 'The server cannot be reached, so your message was not sent.';
export const OFFLINE_REPLY = 'The connection to the server was lost before the reply was finished.';
export const OFFLINE_LOAD = 'The server cannot be reached, so this chat could not be loaded.';
export const BACK_ONLINE = 'The server can be reached again.';

// whenReachable calls back once the server answers again (any HTTP
// answer will do: one from the chat list route, which every agentui
// server has, or a 404 from one that mounts no chat list), checking after
// 1, 2, 4, then every 5 seconds, and at once when the browser says it is
// online. It returns a function that stops checking.
export function whenReachable(back) {
  let stopped = false;
  let timer = null;
  let delay = 1000;
  const check = async () => {
    clearTimeout(timer);
    try {
      noteScope(await fetch('/api/chats?limit=1', { headers: { accept: 'application/json' }, cache: 'no-store' }));
      if (!stopped) {
        stopped = true;
        window.removeEventListener('online', check);
        back();
      }
      return;
    } catch {
      // still unreachable
    }
    if (stopped) return;
    timer = setTimeout(check, delay);
    delay = Math.min(delay * 2, 5000);
  };
  timer = setTimeout(check, delay);
  window.addEventListener('online', check);
  return () => {
    stopped = true;
    clearTimeout(timer);
    window.removeEventListener('online', check);
  };
}

// loadConversation reads a chat's stored messages (useChat's UI messages);
// a chat the server does not have (404) is empty. A server that cannot be
// reached throws an error that isOffline recognises.
export async function loadConversation(chatId, signal) {
  return (await loadStored(chatId, signal)).messages;
}

// loadStored is loadConversation that also says whether the server has
// the chat at all (found).
export async function loadStored(chatId, signal) {
  const res = noteScope(await fetch('/api/chat/' + encodeURIComponent(chatId), { headers: { accept: 'application/json' }, signal }));
  if (res.status === 404) return { messages: [], found: false };
  if (!res.ok) throw new Error('Could not load this conversation: ' + errorText(await res.text(), res.status));
  const messages = await res.json();
  if (!Array.isArray(messages)) throw new Error('Could not load this conversation (unexpected response).');
  return { messages, found: true };
}

function sentence(s) {
  const t = s.trim();
  const first = t.charAt(0).toUpperCase() + t.slice(1);
  return /[.!?…]$/.test(first) ? first : first + '.';
}

async function call(method, path, body) {
  let res;
  try {
    res = await fetch(path, {
      method,
      headers: body === undefined ? { accept: 'application/json' } : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    if (!isOffline(e)) throw e;
    throw Object.assign(new Error('The server cannot be reached.'), { offline: true });
  }
  noteScope(res);
  if (!res.ok) {
    const err = new Error(errorText(await res.text().catch(() => ''), res.status));
    err.status = res.status;
    throw err;
  }
  return res.status === 204 ? null : res.json();
}

export const listChats = () => call('GET', '/api/chats?limit=200').then((r) => r.chats ?? []);
export const renameChat = (id, title) => call('PATCH', '/api/chat/' + encodeURIComponent(id), { title });
export const deleteChat = (id) => call('DELETE', '/api/chat/' + encodeURIComponent(id));

// The chat's queue: the messages sent with "Send after it" while a reply
// ran, waiting on the server for their turn ([{id, text, position}]).
export const listQueued = (id) => call('GET', '/api/chat/' + encodeURIComponent(id) + '/queue').then((r) => r.queued ?? []);
export const removeQueued = (id, message) => call('DELETE', '/api/chat/' + encodeURIComponent(id) + '/queue/' + encodeURIComponent(message));

// The chat's branches (what edits and regenerations replaced): versions
// maps a message id to {ids, index}, its versions (the messages with its
// parent, in the order they were written) and its place among them, for
// the messages that have more than one; switchBranch makes the branch
// through id the active one (the conversation route, or AG-UI's connect,
// then loads it). api is the protocol's routes: '/api/chat' (useChat's UI
// messages) or '/api/agui' (AG-UI messages, whose ids the AG-UI page has).
export async function loadVersions(chatId, api = '/api/chat') {
  const tree = await call('GET', api + '/' + encodeURIComponent(chatId) + '/tree');
  const byParent = new Map();
  for (const { parentId, message } of tree?.messages ?? []) {
    const group = byParent.get(parentId ?? '') ?? [];
    group.push(message.id);
    byParent.set(parentId ?? '', group);
  }
  const versions = {};
  for (const ids of byParent.values()) {
    if (ids.length > 1) ids.forEach((id, index) => (versions[id] = { ids, index }));
  }
  return versions;
}
export const switchBranch = (chatId, id, api = '/api/chat') => call('POST', api + '/' + encodeURIComponent(chatId) + '/branch', { id });

// stopChat asks the server to stop the chat's run. The answer's (empty)
// body is read to its end: a response dropped unread can be collected
// before its body has come, and the browser then cancels the request,
// which DevTools shows as a failed one (net::ERR_ABORTED).
export const stopChat = (id, api) =>
  fetch(`${api}/${encodeURIComponent(id)}/stop`, { method: 'POST' })
    .then((res) => res.arrayBuffer())
    .catch(() => {});

// loadModels lists the models the server offers ({id, default}), the
// default first; [] when it says none (an older server, or an error: the
// page then sends no model and gets the server's default).
export async function loadModels() {
  try {
    const res = await fetch('/api/models');
    if (!res.ok) return [];
    const body = await res.json();
    return Array.isArray(body?.models) ? body.models.filter((m) => typeof m?.id === 'string') : [];
  } catch {
    return [];
  }
}
