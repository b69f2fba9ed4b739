// ChatList is "my chats": the scope's chats from GET /api/chats, newest
// first, to open, rename and delete. It reloads when refresh changes
// (after each reply, so a new chat appears with its title). Rename and
// Delete are in each chat's menu (⋯), so the titles keep their room.
import { useEffect, useRef, useState } from 'react';
import { deleteChat, forgetChat, isOffline, knownTitle, listChats, onScopeRenewed, rememberChat, renameChat } from './api.js';

// A list that lost every chat it showed, or a server that says it no
// longer knows this browser, is said to have lost them: "No chats yet"
// would be untrue, above a conversation still on the screen.
const GONE = 'Your earlier chats are no longer on the server.';
const RENEWED = 'The server no longer knows this browser (it was restarted), so your earlier chats are gone.';

export function ChatList({ current, refresh, onOpen, onDeleted, onError, onTitle }) {
  const [chats, setChats] = useState(null); // null: loading; false: the server keeps none
  const [gone, setGone] = useState(false); // every chat listed before is gone
  const [renewed, setRenewed] = useState(false);
  useEffect(() => onScopeRenewed(() => setRenewed(true)), []);
  const shown = useRef(new Set()); // the chats listed so far
  const deleted = useRef(new Set()); // deleted from this page
  const [loadError, setLoadError] = useState(false);
  const [version, setVersion] = useState(0);
  const [menu, setMenu] = useState(null); // the chat whose menu is open
  const [renaming, setRenaming] = useState(null);
  const [confirming, setConfirming] = useState(null);

  useEffect(() => {
    let stale = false;
    listChats().then(
      (list) => {
        if (stale) return;
        const before = [...shown.current].filter((id) => !deleted.current.has(id));
        const now = new Set(list.map((c) => c.id));
        if (before.length > 0 && before.every((id) => !now.has(id))) setGone(true);
        else if (list.length > 0) setGone(false);
        shown.current = now;
        for (const c of list) rememberChat(c.id, c.title ?? '');
        setChats(list);
        setLoadError(false);
      },
      (e) => {
        if (stale) return;
        if (e.status === 404) setChats(false);
        // A server that cannot be reached is the chat's to report (once):
        // the list stays as it was, and loads again with the next reply.
        else if (!isOffline(e)) setLoadError(true);
      },
    );
    return () => {
      stale = true;
    };
  }, [refresh, version]);

  // A chat the server no longer lists keeps the title it had, here and
  // after a reload: the conversation shown (or the notice that it is
  // gone) is still that chat.
  const title = (chats ? chats.find((c) => c.id === current)?.title : undefined) ?? knownTitle(current);
  useEffect(() => onTitle(title ?? ''), [title, onTitle]);

  if (chats === false) {
    return <p className="chats-note">This server keeps no chats.</p>;
  }
  const again = () => setVersion((v) => v + 1);
  const name = (c) => c.title || 'Untitled chat';
  return (
    <nav className="chats" aria-label="Chats">
      {(renewed || gone) && (
        <p className="chats-note" data-testid="chats-gone">
          {renewed ? RENEWED : GONE}
        </p>
      )}
      {chats?.length === 0 && !renewed && !gone && <p className="chats-note">No chats yet.</p>}
      {loadError && (
        <p className="chats-note" data-testid="chats-error">
          Your chats could not be loaded.{' '}
          <button type="button" className="btn btn-link" onClick={again}>
            Retry
          </button>
        </p>
      )}
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
              <div className="chat-confirm" role="group" aria-label={`Delete “${name(c)}”?`}>
                <span className="chat-confirm-question" data-testid="chat-delete-question">
                  Delete “{name(c)}”?
                </span>
                <span className="chat-confirm-actions">
                  <button
                    type="button"
                    className="btn btn-small btn-deny"
                    data-testid="chat-delete-confirm"
                    onClick={() => {
                      setConfirming(null);
                      deleteChat(c.id).then(
                        () => {
                          deleted.current.add(c.id);
                          forgetChat(c.id);
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
                </span>
              </div>
            ) : (
              <>
                <button
                  type="button"
                  className="chat-open"
                  data-testid="chat-open"
                  aria-current={c.id === current ? 'page' : undefined}
                  title={name(c)}
                  onClick={() => onOpen(c.id)}
                >
                  <span className="chat-title" data-testid="chat-title">
                    {name(c)}
                  </span>
                  <span className="chat-when">{when(c.updatedAt)}</span>
                </button>
                <ChatMenu
                  title={name(c)}
                  open={menu === c.id}
                  onToggle={(open) => setMenu(open ? c.id : null)}
                  onRename={() => {
                    setMenu(null);
                    setRenaming(c.id);
                  }}
                  onDelete={() => {
                    setMenu(null);
                    setConfirming(c.id);
                  }}
                />
              </>
            )}
          </li>
        ))}
      </ul>
    </nav>
  );
}

// ChatMenu is a chat's ⋯ button and the menu it opens (Rename, Delete).
// A click elsewhere or Escape closes it.
function ChatMenu({ title, open, onToggle, onRename, onDelete }) {
  const ref = useRef(null);
  const toggle = useRef(onToggle);
  toggle.current = onToggle;
  useEffect(() => {
    if (!open) return undefined;
    const away = (e) => {
      if (!ref.current?.contains(e.target)) toggle.current(false);
    };
    const key = (e) => {
      if (e.key === 'Escape') {
        e.preventDefault();
        toggle.current(false);
      }
    };
    document.addEventListener('pointerdown', away);
    document.addEventListener('keydown', key);
    ref.current?.querySelector('[role=menuitem]')?.focus();
    return () => {
      document.removeEventListener('pointerdown', away);
      document.removeEventListener('keydown', key);
    };
  }, [open]);
  return (
    <span className="chat-menu" ref={ref}>
      <button
        type="button"
        className="btn btn-quiet chat-menu-button"
        data-testid="chat-menu"
        aria-label={`More for “${title}”`}
        aria-haspopup="menu"
        aria-expanded={open}
        onClick={() => onToggle(!open)}
      >
        ⋯
      </button>
      {open && (
        <span className="chat-menu-items" role="menu" aria-label={`“${title}”`}>
          <button type="button" role="menuitem" className="chat-menu-item" data-testid="chat-rename" onClick={onRename}>
            Rename
          </button>
          <button type="button" role="menuitem" className="chat-menu-item chat-menu-danger" data-testid="chat-delete" onClick={onDelete}>
            Delete…
          </button>
        </span>
      )}
    </span>
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
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            e.preventDefault();
            onCancel();
          }
        }}
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
