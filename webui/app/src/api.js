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
export const BUSY_NOTICE =
  'A reply is being written in this chat from another tab: it shows here. Your message was not sent; send it again when the reply ends.';

// isBusy tells whether an error body is the server's 409 for a chat whose
// reply is still being produced elsewhere (another tab, another device).
export function isBusy(body) {
  try {
    return JSON.parse(body).code === 'busy';
  } catch {
    return false;
  }
}

// loadConversation reads a chat's stored messages (useChat's UI messages);
// a chat the server has never seen is empty.
export async function loadConversation(chatId, signal) {
  const res = await fetch('/api/chat/' + encodeURIComponent(chatId), { headers: { accept: 'application/json' }, signal });
  if (res.status === 404) return [];
  if (!res.ok) throw new Error('Could not load this conversation: ' + errorText(await res.text(), res.status));
  const messages = await res.json();
  if (!Array.isArray(messages)) throw new Error('Could not load this conversation (unexpected response).');
  return messages;
}

function sentence(s) {
  const t = s.trim();
  const first = t.charAt(0).toUpperCase() + t.slice(1);
  return /[.!?…]$/.test(first) ? first : first + '.';
}

async function call(method, path, body) {
  const res = await fetch(path, {
    method,
    headers: body === undefined ? { accept: 'application/json' } : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
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
export const stopChat = (id, api) => fetch(`${api}/${encodeURIComponent(id)}/stop`, { method: 'POST' }).catch(() => {});
