// A useChat page (ai@6, @ai-sdk/react) as an app's developer writes one,
// served by its own dev server: it never loads agentui's page, so agentui
// gives its browser a scope on its first API request. ?api=<url> calls
// agentui on another origin (which lists this one in -cors-origins);
// without it, /api on this origin (the dev server proxies it).
//
// The chat id is ?chat=; the stored chat is loaded from GET
// /api/chat/{id} (404: nothing stored yet, an empty chat), a reply still
// running resumes (resume: true), a message refused because another tab's
// reply runs (409, code busy) shows that reply instead, as agentui's own
// page does. An error shows as the sentence agentui sent ({"error": "…"}),
// and a server that says it keeps nothing for this page (Agentui-Scope:
// none: the page and the API are two sites, and the browser does not send
// the scope cookie) is said so.
import { useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport } from 'ai';

const params = new URLSearchParams(location.search);
const API = (params.get('api') ?? '') + '/api';
const credentials = 'include'; // the scope cookie, across origins too
// A chat id the page makes now has nothing stored: it is not fetched.
const fresh = !params.has('chat');
if (fresh) {
  params.set('chat', crypto.randomUUID());
  history.replaceState(null, '', '?' + params);
}
const chatId = params.get('chat');

// errorText is what a failed request said: agentui answers {"error": "…"}
// (useChat's error.message is the response body).
function errorText(body) {
  try {
    const e = JSON.parse(body).error;
    if (typeof e === 'string' && e) return e;
  } catch {
    // not agentui's JSON
  }
  return body || 'Something went wrong.';
}

// notKept is set when agentui answers Agentui-Scope: none.
let notKept = false;
const listeners = new Set();
async function scopedFetch(input, init) {
  const res = await fetch(input, init);
  if (res.headers.get('agentui-scope') === 'none' && !notKept) {
    notKept = true;
    for (const f of listeners) f();
  }
  return res;
}

async function load() {
  const res = await scopedFetch(`${API}/chat/${encodeURIComponent(chatId)}`, { credentials });
  if (res.status === 404) return [];
  if (!res.ok) throw new Error(errorText(await res.text()));
  return res.json();
}

function App() {
  const [initial, setInitial] = useState(null);
  const [failed, setFailed] = useState('');
  useEffect(() => void (fresh ? setInitial([]) : load().then(setInitial, (e) => setFailed(e.message))), []);
  if (failed) return <p data-testid="error">Could not load this chat: {failed}</p>;
  return initial ? <Chat initial={initial} /> : <p data-testid="loading">Loading…</p>;
}

const text = (m) => m.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');

function Chat({ initial }) {
  const { messages, status, error, sendMessage, regenerate, stop, clearError, setMessages, resumeStream } = useChat({
    id: chatId,
    messages: initial,
    resume: !fresh,
    transport: new DefaultChatTransport({ api: `${API}/chat`, credentials, fetch: scopedFetch }),
  });
  const [unkept, setUnkept] = useState(notKept);
  useEffect(() => {
    const f = () => setUnkept(true);
    listeners.add(f);
    return () => listeners.delete(f);
  }, []);
  const [input, setInput] = useState('');
  const [editing, setEditing] = useState(null);
  const [notice, setNotice] = useState('');
  useEffect(() => {
    if (!error?.message.includes('"code":"busy"')) return;
    clearError();
    setNotice('A reply from another tab is running: it shows here.');
    load().then((stored) => (setMessages(stored), resumeStream()));
  }, [error, clearError, setMessages, resumeStream]);
  const busy = status === 'submitted' || status === 'streaming';
  return (
    <main data-testid="chat" data-status={status}>
      {messages.map((m) => (
        <div key={m.id} data-role={m.role}>
          {editing === m.id ? (
            <form
              onSubmit={(e) => {
                e.preventDefault();
                setEditing(null);
                sendMessage({ text: e.target.elements.text.value, messageId: m.id });
              }}
            >
              <input name="text" data-testid="edit-input" defaultValue={text(m)} />
              <button data-testid="edit-save">Save</button>
            </form>
          ) : (
            <span className="text">{text(m)}</span>
          )}
          {m.role === 'user' && !busy && editing !== m.id && (
            <button data-testid="edit" onClick={() => setEditing(m.id)}>
              Edit
            </button>
          )}
        </div>
      ))}
      {error && <p data-testid="error">{errorText(error.message)}</p>}
      {unkept && (
        <p data-testid="not-kept">
          This chat is not kept: the browser does not send the server its cookie from this page (another site). Call the server by the page's host name
          (localhost with localhost), or through this page's server.
        </p>
      )}
      {notice && <p data-testid="notice">{notice}</p>}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          sendMessage({ text: input });
          setInput('');
        }}
      >
        <input data-testid="input" value={input} onChange={(e) => setInput(e.target.value)} />
        <button data-testid="send" disabled={busy}>
          Send
        </button>
        <button type="button" data-testid="stop" disabled={!busy} onClick={stop}>
          Stop
        </button>
        <button type="button" data-testid="regenerate" disabled={busy || !messages.length} onClick={() => regenerate()}>
          Regenerate
        </button>
      </form>
    </main>
  );
}

createRoot(document.getElementById('root')).render(<App />);
