// The agentui chat page. The chat id and the protocol live in the URL
// (/?chat=<id>&protocol=agui), so a reload shows the same conversation.
import './zod-jitless.js';
import { lazy, StrictMode, Suspense, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { VercelChat } from './VercelChat.jsx';
import { generateId } from './ids.js';
import './styles.css';

const PROTOCOLS = {
  vercel: 'Vercel AI SDK (useChat)',
  agui: 'AG-UI (HttpAgent)',
};
// The AG-UI client (with RxJS and its schemas) loads only when chosen.
const AguiChat = lazy(() => import('./AguiChat.jsx').then((m) => ({ default: m.AguiChat })));

const ID = /^[A-Za-z0-9_-]{1,128}$/;

// fromUrl reads the chat id and protocol; fresh means the page made the id
// up, so there is no stored conversation to fetch.
function fromUrl() {
  const params = new URLSearchParams(window.location.search);
  const protocol = params.get('protocol') === 'agui' ? 'agui' : 'vercel';
  const chat = params.get('chat');
  if (chat && ID.test(chat)) return { chatId: chat, protocol, fresh: false };
  return { chatId: generateId(), protocol, fresh: true };
}

function toUrl({ chatId, protocol }, push) {
  const params = new URLSearchParams(window.location.search);
  params.set('chat', chatId);
  if (protocol === 'agui') params.set('protocol', 'agui');
  else params.delete('protocol');
  const url = '?' + params.toString();
  if (url === window.location.search) return;
  if (push) window.history.pushState(null, '', url);
  else window.history.replaceState(null, '', url);
}

function App() {
  const [view, setView] = useState(fromUrl);
  useEffect(() => toUrl(view, false), []); // eslint-disable-line react-hooks/exhaustive-deps
  useEffect(() => {
    const onPop = () => setView(fromUrl());
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  const go = (next) => {
    toUrl(next, true);
    setView(next);
  };
  const { chatId, protocol, fresh } = view;
  return (
    <div className="app" data-testid="app" data-protocol={protocol} data-chat-id={chatId}>
      <header className="topbar">
        <h1 className="title">
          agentui <span className="subtitle">chat</span>
        </h1>
        <div className="controls">
          <label className="field">
            <span>Protocol</span>
            <select
              data-testid="protocol-switch"
              value={protocol}
              title="Switching the protocol starts a new chat"
              onChange={(e) => go({ chatId: generateId(), protocol: e.target.value, fresh: true })}
            >
              {Object.entries(PROTOCOLS).map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          <button type="button" className="btn" data-testid="new-chat" onClick={() => go({ chatId: generateId(), protocol, fresh: true })}>
            New chat
          </button>
        </div>
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
            <AguiChat key={'agui:' + chatId} chatId={chatId} fresh={fresh} />
          </Suspense>
        ) : (
          <VercelChat key={'vercel:' + chatId} chatId={chatId} fresh={fresh} />
        )}
      </main>
      <footer className="footer">
        <span>
          Chat <code data-testid="chat-id">{chatId}</code> · {protocol === 'agui' ? 'POST /api/agui' : 'POST /api/chat'}
        </span>
      </footer>
    </div>
  );
}

createRoot(document.getElementById('root')).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
