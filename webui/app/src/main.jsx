// The agentui chat page. The chat id, the protocol and useChat's
// transport live in the URL (/?chat=<id>&protocol=agui, &transport=ws), so
// a reload shows the same conversation the same way.
import './zod-jitless.js';
import { lazy, StrictMode, Suspense, useCallback, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { VercelChat } from './VercelChat.jsx';
import { ChatList } from './ChatList.jsx';
import { ErrorBox } from './ui.jsx';
import { generateId } from './ids.js';
import { loadModels, wasKnown } from './api.js';
import './styles.css';

const PROTOCOLS = {
  vercel: 'useChat (Vercel AI SDK)',
  agui: 'AG-UI (HttpAgent)',
};
// useChat's transports: both serve the same chats, so switching keeps the
// chat.
const TRANSPORTS = {
  sse: 'HTTP (server-sent events)',
  ws: 'WebSocket',
};
// The AG-UI client (with RxJS and its schemas) loads only when chosen.
const AguiChat = lazy(() => import('./AguiChat.jsx').then((m) => ({ default: m.AguiChat })));

const ID = /^[A-Za-z0-9_-]{1,128}$/;

// fromUrl reads the chat id, protocol and transport; fresh means the page
// made the id up, so there is no stored conversation to fetch.
function fromUrl() {
  const params = new URLSearchParams(window.location.search);
  const protocol = params.get('protocol') === 'agui' ? 'agui' : 'vercel';
  const transport = params.get('transport') === 'ws' ? 'ws' : 'sse';
  const chat = params.get('chat');
  if (chat && ID.test(chat)) return { chatId: chat, protocol, transport, fresh: false };
  return { chatId: generateId(), protocol, transport, fresh: true };
}

function toUrl({ chatId, protocol, transport }, push) {
  const params = new URLSearchParams(window.location.search);
  params.set('chat', chatId);
  if (protocol === 'agui') params.set('protocol', 'agui');
  else params.delete('protocol');
  if (transport === 'ws') params.set('transport', 'ws');
  else params.delete('transport');
  const url = '?' + params.toString();
  if (url === window.location.search) return;
  if (push) window.history.pushState(null, '', url);
  else window.history.replaceState(null, '', url);
}

function App() {
  const [view, setView] = useState(fromUrl);
  const [menu, setMenu] = useState(false); // the chat list, on a narrow screen
  const [turns, setTurns] = useState(0); // bumped when a reply ends: the list reloads
  const [listError, setListError] = useState(null);
  const [title, setTitle] = useState('');
  // The models the server offers; a picker shows when there is a choice.
  // The choice is the browser's, kept across reloads.
  const [models, setModels] = useState(null); // null until the server answered
  const [model, setModel] = useState(() => localStorage.getItem('agentui.model') || '');
  useEffect(() => {
    loadModels().then(setModels);
  }, []);
  const offered = models ?? [];
  const chosen = offered.some((m) => m.id === model) ? model : offered.find((m) => m.default)?.id ?? '';
  const pick = (id) => {
    setModel(id);
    localStorage.setItem('agentui.model', id);
  };
  useEffect(() => toUrl(view, false), []); // eslint-disable-line react-hooks/exhaustive-deps
  useEffect(() => {
    const onPop = () => setView(fromUrl());
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  const go = (next) => {
    toUrl(next, true);
    setView(next);
    setMenu(false);
  };
  const onTurnEnd = useCallback(() => setTurns((n) => n + 1), []);
  const onListError = useCallback((m) => setListError(m), []);
  const { chatId, protocol, transport, fresh, draft, autoSend } = view;
  const newChat = () => go({ chatId: generateId(), protocol, transport, fresh: true });
  // A chat the server no longer has cannot go on: a new one starts with
  // the text that was not sent in its composer, or sends it (send).
  const startOver = useCallback((text, send) => go({ chatId: generateId(), protocol, transport, fresh: true, draft: text, autoSend: !!send && !!text }), [protocol, transport]); // eslint-disable-line react-hooks/exhaustive-deps
  useEffect(() => {
    document.title = title ? title + ' · agentui' : 'agentui chat';
  }, [title]);
  return (
    <div className={'app' + (menu ? ' menu-open' : '')} data-testid="app" data-protocol={protocol} data-transport={transport} data-chat-id={chatId}>
      {/* First in the tab order, shown only when focused: a keyboard user
          gets past the chat list to the message box in one step. It moves
          the focus itself (a #fragment would add a history entry). */}
      <a
        className="skip-link"
        href="#chat-input"
        data-testid="skip-link"
        onClick={(e) => {
          e.preventDefault();
          document.getElementById('chat-input')?.focus();
        }}
      >
        Skip to the message box
      </a>
      <aside className="sidebar" aria-label="Your chats" data-testid="sidebar">
        <div className="sidebar-head">
          <span className="brand">
            agentui <span className="subtitle">chat</span>
          </span>
          <button type="button" className="btn btn-primary btn-small" data-testid="new-chat" onClick={newChat}>
            New chat
          </button>
        </div>
        <ChatList
          current={chatId}
          refresh={turns}
          onOpen={(id) => id !== chatId && go({ chatId: id, protocol, transport, fresh: false })}
          onDeleted={(id) => id === chatId && newChat()}
          onError={onListError}
          onTitle={setTitle}
        />
        <ErrorBox message={listError} onDismiss={() => setListError(null)} />
        {models && <span hidden data-testid="models-loaded" />}
        {offered.length > 1 && (
          <label className="field model">
            <span>Model</span>
            <select data-testid="model-picker" value={chosen} title="The model your next message goes to" onChange={(e) => pick(e.target.value)}>
              {offered.map((m) => (
                <option key={m.id} value={m.id}>
                  {m.id}
                </option>
              ))}
            </select>
          </label>
        )}
        <label className="field protocol">
          <span>Protocol</span>
          <select
            data-testid="protocol-switch"
            value={protocol}
            title="Switching the protocol starts a new chat"
            onChange={(e) => go({ chatId: generateId(), protocol: e.target.value, transport, fresh: true })}
          >
            {Object.entries(PROTOCOLS).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        {protocol === 'vercel' && (
          <label className="field transport">
            <span>Transport</span>
            <select
              data-testid="transport-switch"
              value={transport}
              title="How useChat talks to the server; the chat stays"
              onChange={(e) => go({ chatId, protocol, transport: e.target.value, fresh: fresh && !wasKnown(chatId) })}
            >
              {Object.entries(TRANSPORTS).map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </label>
        )}
      </aside>
      <button type="button" className="scrim" aria-label="Close the chat list" tabIndex={-1} onClick={() => setMenu(false)} />
      <div className="main">
        <header className="topbar">
          <button type="button" className="btn btn-quiet menu-button" data-testid="menu" aria-label="Chats" aria-expanded={menu} onClick={() => setMenu((m) => !m)}>
            ☰
          </button>
          <h1 className="title" data-testid="chat-heading">
            {title || 'New chat'}
          </h1>
          <button type="button" className="btn btn-quiet new-chat-top" data-testid="new-chat-top" aria-label="New chat" onClick={newChat}>
            +
          </button>
        </header>
        <main className="chat" aria-label="Conversation">
          {protocol === 'agui' ? (
            <Suspense
              fallback={
                <p className="loading" data-testid="loading" role="status">
                  Loading the AG-UI client…
                </p>
              }
            >
              <AguiChat key={'agui:' + chatId} chatId={chatId} fresh={fresh} draft={draft} autoSend={autoSend} model={chosen} onTurnEnd={onTurnEnd} onNewChat={startOver} />
            </Suspense>
          ) : (
            <VercelChat key={'vercel:' + transport + ':' + chatId} chatId={chatId} transport={transport} fresh={fresh} draft={draft} autoSend={autoSend} model={chosen} onTurnEnd={onTurnEnd} onNewChat={startOver} />
          )}
        </main>
        <footer className="footer">
          Chat <code data-testid="chat-id">{chatId}</code> · {protocol === 'agui' ? 'AG-UI' : transport === 'ws' ? 'useChat over a WebSocket' : 'useChat'}
        </footer>
      </div>
    </div>
  );
}

createRoot(document.getElementById('root')).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
