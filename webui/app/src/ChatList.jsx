// ChatList is "my chats": the scope's chats from GET /api/chats, newest
// first, to open, rename and delete. It reloads when refresh changes
// (after each reply, so a new chat appears with its title).
import { useEffect, useRef, useState } from 'react';
import { deleteChat, listChats, renameChat } from './api.js';

export function ChatList({ current, refresh, onOpen, onDeleted, onError, onTitle }) {
  const [chats, setChats] = useState(null); // null: loading; false: the server keeps none
  const [version, setVersion] = useState(0);
  const [renaming, setRenaming] = useState(null);
  const [confirming, setConfirming] = useState(null);

  useEffect(() => {
    let gone = false;
    listChats().then(
      (list) => !gone && setChats(list),
      (e) => {
        if (gone) return;
        if (e.status === 404) setChats(false);
        else onError(e.message);
      },
    );
    return () => {
      gone = true;
    };
  }, [refresh, version, onError]);

  const title = chats ? chats.find((c) => c.id === current)?.title : undefined;
  useEffect(() => onTitle(title ?? ''), [title, onTitle]);

  if (chats === false) {
    return <p className="chats-note">This server keeps no chats.</p>;
  }
  const again = () => setVersion((v) => v + 1);
  return (
    <nav className="chats" aria-label="Chats">
      {chats?.length === 0 && <p className="chats-note">No chats yet.</p>}
      <ul className="chat-items" data-testid="chat-list">
        {(chats ?? []).map((c) => (
          <li key={c.id} className={'chat-item' + (c.id === current ? ' chat-item-current' : '')} data-testid="chat-item" data-chat-id={c.id}>
            {renaming === c.id ? (
              <RenameBox
                title={c.title}
                onCancel={() => setRenaming(null)}
                onSave={(t) => {
                  setRenaming(null);
                  renameChat(c.id, t).then(again, (e) => onError(e.message));
                }}
              />
            ) : confirming === c.id ? (
              <div className="chat-confirm" role="group" aria-label="Delete this chat?">
                <span>Delete this chat?</span>
                <button
                  type="button"
                  className="btn btn-small btn-deny"
                  data-testid="chat-delete-confirm"
                  onClick={() => {
                    setConfirming(null);
                    deleteChat(c.id).then(
                      () => {
                        again();
                        onDeleted(c.id);
                      },
                      (e) => onError(e.message),
                    );
                  }}
                >
                  Delete
                </button>
                <button type="button" className="btn btn-small" onClick={() => setConfirming(null)}>
                  Cancel
                </button>
              </div>
            ) : (
              <>
                <button
                  type="button"
                  className="chat-open"
                  data-testid="chat-open"
                  aria-current={c.id === current ? 'page' : undefined}
                  title={c.title || 'Untitled chat'}
                  onClick={() => onOpen(c.id)}
                >
                  <span className="chat-title" data-testid="chat-title">
                    {c.title || 'Untitled chat'}
                  </span>
                  <span className="chat-when">{when(c.updatedAt)}</span>
                </button>
                <span className="chat-tools">
                  <button type="button" className="btn btn-small btn-quiet" data-testid="chat-rename" aria-label={'Rename ' + (c.title || 'this chat')} onClick={() => setRenaming(c.id)}>
                    Rename
                  </button>
                  <button type="button" className="btn btn-small btn-quiet" data-testid="chat-delete" aria-label={'Delete ' + (c.title || 'this chat')} onClick={() => setConfirming(c.id)}>
                    Delete
                  </button>
                </span>
              </>
            )}
          </li>
        ))}
      </ul>
    </nav>
  );
}

function RenameBox({ title, onSave, onCancel }) {
  const [value, setValue] = useState(title);
  const ref = useRef(null);
  useEffect(() => ref.current?.select(), []);
  return (
    <form
      className="chat-rename"
      onSubmit={(e) => {
        e.preventDefault();
        onSave(value);
      }}
    >
      <input
        ref={ref}
        data-testid="chat-title-input"
        aria-label="Chat title"
        maxLength={100}
        value={value}
        onChange={(e) => setValue(e.target.value)}
        onKeyDown={(e) => e.key === 'Escape' && onCancel()}
      />
      <button type="submit" className="btn btn-small btn-primary" data-testid="chat-rename-save">
        Save
      </button>
    </form>
  );
}

// when says how long ago a chat was last written, briefly.
function when(iso) {
  const t = Date.parse(iso);
  if (!t) return '';
  const s = Math.max(0, (Date.now() - t) / 1000);
  if (s < 60) return 'now';
  if (s < 3600) return Math.floor(s / 60) + ' min';
  if (s < 86400) return Math.floor(s / 3600) + ' h';
  return new Date(t).toLocaleDateString('en-US', { month: 'short', day: 'numeric' });
}
