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
