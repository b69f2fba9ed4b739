// Presentational pieces both protocols share: messages, tool cards,
// reasoning, the composer, the error box and the empty chat. Every
// element a test needs carries a data-testid.
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { errorText as refusalSentence, listQueued, removeQueued } from './api.js';

const STATE_LABELS = {
  'input-streaming': 'receiving input',
  'input-available': 'running',
  'approval-requested': 'needs approval',
  'approval-responded': 'answered',
  'approval-expired': 'not answered',
  'output-available': 'done',
  'output-error': 'failed',
  'output-denied': 'denied',
};

export function Json({ value }) {
  if (value === undefined) return null;
  let text;
  try {
    if (typeof value === 'string') text = value;
    else {
      // Small values stay on one line; larger ones are indented.
      text = JSON.stringify(value);
      if (text.length > 72) text = JSON.stringify(value, null, 2);
    }
  } catch {
    text = String(value);
  }
  return <pre className="json">{text}</pre>;
}

// brief says a tool's input or output in a few words for the one-line
// summary: an object's fields as "key: value", a string as it is; the
// line is cut by CSS where it runs out of room.
export function brief(value) {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value !== 'object') return String(value);
  if (Array.isArray(value)) return value.length === 0 ? '' : `${value.length} item${value.length === 1 ? '' : 's'}`;
  return Object.entries(value)
    .map(([k, v]) => `${k}: ${v !== null && typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
    .join(', ');
}

// ToolCard shows one tool call as one line (its name, what it was given
// and what it returned, its state), which opens onto its whole input and
// output (or, while a streaming tool runs, its latest progress). While it
// waits for approval it shows Approve and Deny with an optional reason
// (the model reads it with the denial), whether it is open or not.
export function ToolCard({ id, name, state, input, output, preliminary, errorText, approval, onApprove, onDeny, busy }) {
  const waiting = state === 'approval-requested';
  const [reason, setReason] = useState('');
  let label = STATE_LABELS[state] ?? state;
  if (state === 'approval-responded' && approval) label = approval.approved ? 'approved' : 'denied';
  if (preliminary) label = 'working';
  const given = typeof input === 'string' ? '' : brief(input); // a string is input still streaming
  // A denied call ran nothing: what it "returned" is the server's note to
  // the model (with the reason, which shows once, below).
  const denied = state === 'output-denied';
  const got = denied ? '' : errorText ? errorText : brief(output);
  return (
    <section
      className={`tool tool-${state}`}
      data-testid="tool"
      data-tool-name={name}
      data-tool-call-id={id}
      data-state={state}
      data-preliminary={preliminary ? 'true' : undefined}
      aria-label={`Tool call ${name}`}
    >
      <details className="tool-details">
        <summary className="tool-head" data-testid="tool-summary">
          <span className="tool-icon" aria-hidden="true">
            ⚙
          </span>
          <span className="tool-line">
            <code className="tool-name" data-testid="tool-name">
              {name}
            </code>
            {given && <span className="tool-given">{given}</span>}
            {got && (
              <span className="tool-got">
                {' → '}
                {got}
              </span>
            )}
          </span>
          <span className={`badge badge-${state}`} data-testid="tool-state">
            {label}
          </span>
        </summary>
        {input !== undefined && (
          <div className="tool-io">
            <span className="tool-io-label">Input</span>
            <Json value={input} />
          </div>
        )}
        {output !== undefined && !denied && (
          <div className="tool-io" data-testid="tool-output">
            <span className="tool-io-label">{preliminary ? 'Progress' : 'Output'}</span>
            <Json value={output} />
          </div>
        )}
        {errorText && (
          <div className="tool-io tool-error" data-testid="tool-error">
            <span className="tool-io-label">Error</span>
            <pre className="json">{errorText}</pre>
          </div>
        )}
      </details>
      {waiting && (
        <div className="approval" role="group" aria-label={`Approve or deny ${name}`}>
          <span className="approval-question">Allow this tool call?</span>
          <div className="approval-actions">
            <button type="button" className="btn btn-approve" data-testid="approve" disabled={busy} onClick={onApprove}>
              Approve
            </button>
            <div className="approval-deny">
              <input
                className="approval-reason-input"
                data-testid="deny-reason"
                aria-label="Reason for denying (optional)"
                placeholder="Reason (optional)"
                maxLength={500}
                value={reason}
                onChange={(e) => setReason(e.target.value)}
                onKeyDown={(e) => {
                  if (e.key === 'Enter' && !busy) onDeny(reason.trim() || undefined);
                }}
              />
              <button type="button" className="btn btn-deny" data-testid="deny" disabled={busy} onClick={() => onDeny(reason.trim() || undefined)}>
                Deny
              </button>
            </div>
          </div>
        </div>
      )}
      {approval?.reason && (
        <p className="approval-reason" data-testid="approval-reason">
          Reason: {approval.reason}
        </p>
      )}
    </section>
  );
}

export function Reasoning({ text, streaming }) {
  return (
    <details className="reasoning" data-testid="reasoning" open={streaming || undefined}>
      <summary>{streaming ? 'Thinking…' : 'Reasoning'}</summary>
      <p className="reasoning-text">{text}</p>
    </details>
  );
}

// UserText shows what the user typed as they typed it: plain text, line
// breaks kept, nothing interpreted.
export function UserText({ text }) {
  return (
    <div className="text user-text" data-testid="text">
      {text}
    </div>
  );
}

// A failed reply is marked, with a note that says whether it had begun;
// what went wrong shows once, in the error box under the chat.
export function Message({ role, id, streaming, failed, began = true, children, actions, footer }) {
  const who = role === 'user' ? 'You' : role === 'assistant' ? 'Assistant' : role;
  return (
    <li
      className={`message message-${role}${failed ? ' message-failed' : ''}`}
      data-testid="message"
      data-role={role}
      data-message-id={id}
      data-failed={failed ? 'true' : undefined}
      aria-busy={streaming || undefined}
    >
      <div className="message-role">{who}</div>
      <div className="message-body">
        {children}
        {failed && (
          <p className="failed-note" data-testid="failed">
            {began ? 'This reply failed before it was finished.' : 'This reply failed before it began.'}
          </p>
        )}
        {(actions || footer) && (
          <div className="message-foot">
            {actions && <div className="message-actions">{actions}</div>}
            {footer}
          </div>
        )}
      </div>
    </li>
  );
}

// Usage shows a reply's token usage (and model) as the server reported it.
export function Usage({ usage, model }) {
  if (!usage) return null;
  const n = (x) => (typeof x === 'number' ? x.toLocaleString('en-US') : '?');
  const counts = [`${n(usage.inputTokens)} input`, `${n(usage.outputTokens)} output`];
  if (usage.reasoningTokens) counts.push(`${n(usage.reasoningTokens)} reasoning`);
  return (
    <span className="usage" data-testid="usage" title={model ? 'Model: ' + model : undefined}>
      {counts.join(' · ')} tokens
      {model ? ` · ${model}` : ''}
    </span>
  );
}

// CopyButton copies text to the clipboard and says so for a moment.
export function CopyButton({ text, label = 'Copy', testid = 'copy', className = 'btn btn-small btn-quiet' }) {
  const [done, setDone] = useState(false);
  useEffect(() => {
    if (!done) return undefined;
    const t = setTimeout(() => setDone(false), 1500);
    return () => clearTimeout(t);
  }, [done]);
  return (
    <button
      type="button"
      className={className}
      data-testid={testid}
      onClick={() =>
        navigator.clipboard?.writeText(typeof text === 'function' ? text() : text).then(
          () => setDone(true),
          () => {},
        )
      }
    >
      {done ? 'Copied' : label}
    </button>
  );
}

// UserTurn is a message the user sent: its content (children), or the
// editor while it is being edited, with Edit under it. actions holds
// edit(id), saveEdit(id, text) and cancelEdit().
export function UserTurn({ id, text, editing, busy, actions, versions, children }) {
  return (
    <Message
      role="user"
      id={id}
      actions={
        !editing && (
          <>
            <Versions versions={versions} busy={busy} onPick={actions.pickVersion} />
            <button type="button" className="btn btn-small btn-quiet" data-testid="edit" disabled={busy} onClick={() => actions.edit(id)}>
              Edit
            </button>
          </>
        )
      }
    >
      {editing ? <UserEditor text={text} onSave={(t) => actions.saveEdit(id, t)} onCancel={actions.cancelEdit} /> : children}
    </Message>
  );
}

// UserEditor edits a sent message in place: Save sends the new text in
// its stead (everything after it is answered again), Escape cancels.
export function UserEditor({ text, onSave, onCancel }) {
  const [value, setValue] = useState(text);
  const ref = useRef(null);
  useEffect(() => {
    const el = ref.current;
    el?.focus();
    el?.setSelectionRange(el.value.length, el.value.length);
  }, []);
  const save = () => {
    const t = value.trim();
    if (t) onSave(t);
  };
  return (
    <div className="editor" data-testid="editor">
      <textarea
        ref={ref}
        data-testid="edit-input"
        aria-label="Edit your message"
        value={value}
        rows={2}
        onChange={(e) => setValue(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            e.preventDefault();
            onCancel();
          }
          if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault();
            save();
          }
        }}
      />
      <div className="editor-actions">
        <button type="button" className="btn btn-small" onClick={onCancel}>
          Cancel
        </button>
        <button type="button" className="btn btn-small btn-primary" data-testid="edit-save" disabled={!value.trim()} onClick={save}>
          Send
        </button>
      </div>
    </div>
  );
}

// SUGGESTIONS start an empty chat with one click: things the demo model
// does (docs/demo-model.md) that read as ordinary requests to a real one.
const SUGGESTIONS = [
  { title: 'Check the weather', detail: 'a tool the server runs', prompt: 'What is the weather in Paris?' },
  { title: 'Ask before acting', detail: 'a tool that needs your approval', prompt: 'Delete /tmp/old-notes.txt' },
  { title: 'Find where I am', detail: 'a tool this page answers', prompt: 'Where am I?' },
  { title: 'Research a topic', detail: 'a tool that reports its progress', prompt: 'Research solar power' },
];

// MessageList keeps the newest message in view while the user has not
// scrolled away from the bottom; sending a message (pinKey changes) or
// resizing the window while at the bottom keeps it there too. Scrolled
// away, a button brings the newest message back. An empty chat offers
// suggestions (onSuggest sends one).
export function MessageList({ children, empty, contentKey, pinKey, onSuggest }) {
  const ref = useRef(null);
  const pinned = useRef(true);
  const [away, setAway] = useState(false);
  const toBottom = () => {
    const el = ref.current;
    if (el) el.scrollTop = el.scrollHeight;
  };
  useLayoutEffect(() => {
    pinned.current = true;
    setAway(false);
  }, [pinKey]);
  useLayoutEffect(() => {
    if (pinned.current) toBottom();
  }, [contentKey, pinKey]);
  useEffect(() => {
    const el = ref.current;
    if (!el || typeof ResizeObserver === 'undefined') return undefined;
    // A resize runs this before the scroll event it causes, so pinned
    // still says where the user was.
    // The content grows by itself too (fonts and formulas load, a tool
    // card opens): the same holds.
    const ro = new ResizeObserver(() => {
      if (pinned.current) toBottom();
    });
    ro.observe(el);
    if (el.firstElementChild) ro.observe(el.firstElementChild);
    return () => ro.disconnect();
  }, [empty]);
  return (
    <div className="messages-wrap">
      <div
        className="messages-scroll"
        ref={ref}
        onScroll={(e) => {
          const el = e.currentTarget;
          pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
          setAway(!pinned.current);
        }}
      >
        {empty ? (
          <div className="empty" data-testid="empty">
            <h2 className="empty-title">What can I help with?</h2>
            <div className="suggestions">
              {SUGGESTIONS.map((s) => (
                <button key={s.prompt} type="button" className="suggestion" data-testid="suggestion" onClick={() => onSuggest?.(s.prompt)}>
                  <span className="suggestion-title">{s.title}</span>
                  <span className="suggestion-prompt">{s.prompt}</span>
                  <span className="suggestion-detail">{s.detail}</span>
                </button>
              ))}
            </div>
          </div>
        ) : (
          <ol className="messages" data-testid="messages">
            {children}
          </ol>
        )}
      </div>
      {away && !empty && (
        <button
          type="button"
          className="btn scroll-latest"
          data-testid="scroll-latest"
          aria-label="Scroll to the latest message"
          title="Scroll to the latest message"
          onClick={() => {
            pinned.current = true;
            setAway(false);
            toBottom();
          }}
        >
          ↓
        </button>
      )}
    </div>
  );
}

// STOP_WAIT_MS is how long Stop waits for the stopped reply's stream to
// end by itself before it stops reading.
export const STOP_WAIT_MS = 1500;

// useWhenIdle returns a function that waits, at most ms, for busy to be
// false; it resolves to whether it is. Stop waits so for the stopped
// reply's stream to end by itself: the deltas the server sent before it
// stopped then show, as they are stored, rather than being cut off by the
// page.
export function useWhenIdle(busy) {
  const waiting = useRef([]);
  const now = useRef(busy);
  now.current = busy;
  useEffect(() => {
    if (!busy) for (const done of waiting.current.splice(0)) done(true);
  }, [busy]);
  const [whenIdle] = useState(
    () => (ms) =>
      new Promise((done) => {
        if (!now.current) {
          done(true);
          return;
        }
        const timer = setTimeout(() => {
          waiting.current = waiting.current.filter((f) => f !== finish);
          done(false);
        }, ms);
        const finish = (v) => {
          clearTimeout(timer);
          done(v);
        };
        waiting.current.push(finish);
      }),
  );
  return whenIdle;
}

// NoReply ends a chat whose last message got no reply and none is coming
// (it was stopped before its first word, which is not stored).
export function NoReply() {
  return (
    <li className="message message-assistant no-reply-turn" data-testid="no-reply" aria-label="No reply">
      <div className="message-role">Assistant</div>
      <div className="message-body">
        <p className="no-reply">No reply.</p>
      </div>
    </li>
  );
}

// Pending stands in for the assistant's reply until its first part arrives.
export function Pending() {
  return (
    <li className="message message-assistant pending" data-testid="pending" aria-label="Waiting for the reply">
      <div className="message-role">Assistant</div>
      <div className="message-body">
        <span className="dots" aria-hidden="true">
          <span />
          <span />
          <span />
        </span>
      </div>
    </li>
  );
}

export function ErrorBox({ message, onRetry, onDismiss }) {
  if (!message) return null;
  return (
    <div className="error" role="alert" data-testid="error">
      <span data-testid="error-text">{message}</span>
      <span className="error-actions">
        {onRetry && (
          <button type="button" className="btn btn-small" data-testid="retry" onClick={onRetry}>
            Retry
          </button>
        )}
        {onDismiss && (
          <button type="button" className="btn btn-link" onClick={onDismiss} aria-label="Dismiss the error">
            Dismiss
          </button>
        )}
      </span>
    </div>
  );
}

// FailureBox shows what went wrong with the chat (see failure.js): a
// sentence with Retry, or, for a chat the server no longer has, a notice
// that offers a new chat with the text that was not sent.
export function FailureBox({ failure, onRetry, onDismiss, onNewChat }) {
  if (!failure) return null;
  if (failure.kind === 'unknown') {
    return (
      <div className="error notice" role="alert" data-testid="unknown-chat">
        <span data-testid="error-text">{failure.text}</span>
        <span className="error-actions">
          <button type="button" className="btn btn-small btn-primary" data-testid="start-new-chat" onClick={() => onNewChat(failure.draft ?? '')}>
            {failure.draft ? 'Start a new chat with your message' : 'Start a new chat'}
          </button>
        </span>
      </div>
    );
  }
  return <ErrorBox message={failure.text} onRetry={failure.retry ? onRetry : undefined} onDismiss={onDismiss} />;
}

// Composer is where a message is written: Enter sends, Shift+Enter starts
// a new line, and the box grows with its text. While a reply streams,
// Stop replaces Send (typing goes on), and Escape stops it too. The
// status line is what a screen reader announces (the message list is not
// live: it would read out every streamed word).
// refill ({text}: a new object each time) puts a message the server
// refused back in the box, unless something else has been typed there.
// While a reply streams the box stays usable: a message typed then is
// sent (Enter, or its button) as the visible choice beside it says:
// "steer" gives it to the running reply, which answers it after its
// current step; "queue" keeps it on the server until the reply has
// ended, then sends it; "interrupt" stops the reply and sends it. onSend
// gets the choice as its second argument (none when no reply runs).
const BUSY_LABELS = { steer: 'Steer', queue: 'Queue', interrupt: 'Send' };
const BUSY_TITLES = {
  steer: 'The reply answers this after its current step',
  queue: 'Sent when the reply has ended (kept on the server)',
  interrupt: 'Stop the reply and send this',
};

// QueuedList shows the messages waiting on the server for the running
// reply to end, the next first, each with Remove.
export function QueuedList({ items, onRemove }) {
  if (items.length === 0) return null;
  return (
    <section className="queued" data-testid="queued-list" aria-label="Queued messages">
      <p className="queued-title">Sent after the reply</p>
      <ol>
        {items.map((q) => (
          <li key={q.id} data-testid="queued">
            <span className="queued-text">{q.text}</span>
            <button type="button" className="btn btn-small btn-quiet" data-testid="unqueue" onClick={() => onRemove(q.id)}>
              Remove
            </button>
          </li>
        ))}
      </ol>
    </section>
  );
}

// useQueue is the chat's queue as the server keeps it, looked at again
// on refresh() and every QUEUE_POLL_MS while a reply runs or something
// waits (another tab may queue or remove). remove(id) takes one out.
export function useQueue(chatId, active, onError) {
  const [items, setItems] = useState([]);
  const seq = useRef(0);
  const refresh = useCallback(() => {
    const n = ++seq.current;
    return listQueued(chatId).then(
      (qs) => {
        if (n === seq.current) setItems(qs);
      },
      () => {}, // a server that cannot answer now is asked again soon
    );
  }, [chatId]);
  const polling = active || items.length > 0;
  useEffect(() => {
    refresh();
    if (!polling) return undefined;
    const t = setInterval(refresh, QUEUE_POLL_MS);
    return () => clearInterval(t);
  }, [refresh, polling]);
  // soon asks again shortly, a few times: for a message queued where no
  // "queued" answer comes (over a WebSocket the socket numbers the turn's
  // chunks alone), so that it shows in the list at once.
  const timers = useRef([]);
  useEffect(() => () => timers.current.forEach(clearTimeout), [chatId]);
  const soon = useCallback(() => {
    timers.current.forEach(clearTimeout);
    timers.current = QUEUE_SOON_MS.map((ms) => setTimeout(refresh, ms));
  }, [refresh]);
  const remove = useCallback(
    (id) => {
      setItems((qs) => qs.filter((q) => q.id !== id));
      removeQueued(chatId, id).then(refresh, (e) => {
        if (e.status !== 404) onError?.(e);
        refresh();
      });
    },
    [chatId, refresh, onError],
  );
  return { items, refresh, soon, remove };
}

const QUEUE_POLL_MS = 1500;
const QUEUE_SOON_MS = [50, 150, 400, 800];

export function Composer({ busy, onSend, onStop, status, statusText, draft, refill, canAttach }) {
  const [text, setText] = useState(draft ?? '');
  const [whileBusy, setWhileBusy] = useState('steer');
  const input = useRef(null);
  const files = useAttachments();
  const picker = useRef(null);
  useEffect(() => {
    if (refill?.text) setText((t) => (t.trim() ? t : refill.text));
  }, [refill]);
  const [touch] = useState(() => typeof matchMedia === 'function' && matchMedia('(pointer: coarse)').matches);
  useEffect(() => {
    if (!busy) input.current?.focus();
  }, [busy]);
  const stop = useRef(onStop);
  stop.current = onStop;
  useEffect(() => {
    if (!busy) return undefined;
    // Escape stops the reply, unless something else used it (an editor
    // cancelling, a menu closing).
    const onKey = (e) => {
      if (e.key === 'Escape' && !e.defaultPrevented) stop.current();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [busy]);
  const ready = files.items.filter((f) => f.part);
  const sendable = (text.trim() || ready.length > 0) && !files.uploading;
  const submit = (e) => {
    e?.preventDefault();
    const t = text.trim();
    if (!sendable) return;
    const parts = ready.map((f) => f.part);
    if (busy) onSend(t, whileBusy, parts);
    else onSend(t, undefined, parts);
    setText('');
    files.clear();
  };
  const attach = canAttach ? files.add : undefined;
  return (
    <form
      className="composer"
      onSubmit={submit}
      data-testid="composer"
      data-status={status}
      onDragOver={(e) => attach && e.dataTransfer.types.includes('Files') && e.preventDefault()}
      onDrop={(e) => {
        if (!attach || e.dataTransfer.files.length === 0) return;
        e.preventDefault();
        attach(e.dataTransfer.files);
      }}
    >
      {files.items.length > 0 && <Attachments items={files.items} onRemove={files.remove} />}
      <label htmlFor="chat-input" className="visually-hidden">
        Message
      </label>
      <textarea
        id="chat-input"
        ref={input}
        data-testid="input"
        rows={1}
        autoComplete="off"
        enterKeyHint="send"
        placeholder={touch ? 'Message the assistant' : 'Message (Enter to send, Shift+Enter for a new line)'}
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) submit(e);
        }}
        onPaste={(e) => {
          if (!attach || e.clipboardData.files.length === 0) return;
          e.preventDefault();
          attach(e.clipboardData.files);
        }}
      />
      {attach && (
        <>
          <input
            ref={picker}
            type="file"
            multiple
            hidden
            accept={ACCEPTED_FILES}
            data-testid="attach-input"
            onChange={(e) => {
              attach(e.target.files);
              e.target.value = '';
            }}
          />
          <button type="button" className="btn btn-quiet attach" data-testid="attach" aria-label="Attach files" title="Attach images, PDFs or text files" onClick={() => picker.current?.click()}>
            <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round">
              <path d="M21 11.5l-8.5 8.5a5 5 0 0 1-7-7l8.5-8.5a3.5 3.5 0 0 1 5 5L10.5 18a2 2 0 0 1-3-3l7.5-7.5" />
            </svg>
          </button>
        </>
      )}
      {busy ? (
        <>
          {text.trim() && (
            <>
              <label htmlFor="while-busy" className="visually-hidden">
                While the reply runs
              </label>
              <select id="while-busy" data-testid="while-busy" value={whileBusy} onChange={(e) => setWhileBusy(e.target.value)}>
                <option value="steer">Add to the reply</option>
                <option value="queue">Send after it</option>
                <option value="interrupt">Stop it and send</option>
              </select>
              <button type="submit" className="btn btn-primary" data-testid="send-busy" title={BUSY_TITLES[whileBusy]}>
                {BUSY_LABELS[whileBusy]}
              </button>
            </>
          )}
          <button type="button" className="btn btn-stop" data-testid="stop" title="Stop the reply (Esc)" onClick={onStop}>
            Stop
          </button>
        </>
      ) : (
        <button type="submit" className="btn btn-primary" data-testid="send" disabled={!sendable}>
          Send
        </button>
      )}
      <p className="visually-hidden" role="status" aria-live="polite" data-testid="status">
        {statusText}
      </p>
    </form>
  );
}

// Versions is "‹ 2/3 ›" on a message an edit or a regeneration replaced
// or made: its versions ({ids, index}), the one shown, and the buttons to
// the one before and after (onPick(id) shows that one's branch).
export function Versions({ versions, busy, onPick }) {
  if (!versions) return null;
  const { ids, index } = versions;
  return (
    <span className="versions" data-testid="versions">
      <button type="button" className="btn btn-small btn-quiet" data-testid="version-previous" aria-label="Previous version" disabled={busy || index === 0} onClick={() => onPick(ids[index - 1])}>
        ‹
      </button>
      <span data-testid="version-number" aria-label={`Version ${index + 1} of ${ids.length}`}>
        {index + 1}/{ids.length}
      </span>
      <button type="button" className="btn btn-small btn-quiet" data-testid="version-next" aria-label="Next version" disabled={busy || index === ids.length - 1} onClick={() => onPick(ids[index + 1])}>
        ›
      </button>
    </span>
  );
}

// The files the page attaches: what the server accepts (files.DefaultTypes).
const ACCEPTED_FILES = 'image/png,image/jpeg,image/gif,image/webp,application/pdf,text/plain';

// useAttachments uploads the files a person attaches (POST /api/files,
// with progress) and keeps them until the message is sent: {items:
// [{key, name, preview, progress, error, part}], add, remove, clear,
// uploading}. part is the useChat file part once uploaded: its URL, which
// the server maps back to the file it keeps.
function useAttachments() {
  const [items, setItems] = useState([]);
  const next = useRef(0);
  const update = (key, patch) => setItems((xs) => xs.map((x) => (x.key === key ? { ...x, ...patch } : x)));
  const add = (fileList) => {
    for (const file of Array.from(fileList)) {
      const key = ++next.current;
      const preview = file.type.startsWith('image/') ? URL.createObjectURL(file) : null;
      setItems((xs) => [...xs, { key, name: file.name, preview, progress: 0 }]);
      uploadFile(file, (progress) => update(key, { progress }))
        .then((up) => update(key, { progress: 1, part: { type: 'file', mediaType: up.mediaType, filename: up.name || file.name, url: up.url } }))
        .catch((e) => update(key, { error: e.message }));
    }
  };
  const remove = (key) =>
    setItems((xs) => {
      const gone = xs.find((x) => x.key === key);
      if (gone?.preview) URL.revokeObjectURL(gone.preview);
      return xs.filter((x) => x.key !== key);
    });
  const clear = () => setItems([]);
  return { items, add, remove, clear, uploading: items.some((x) => !x.part && !x.error) };
}

// uploadFile posts file as a form, reporting progress (0…1), and resolves
// with the server's answer ({id, url, mediaType, size, name}); a refusal
// rejects with its sentence.
function uploadFile(file, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', '/api/files');
    xhr.responseType = 'text';
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onload = () => {
      if (xhr.status === 201) {
        resolve(JSON.parse(xhr.responseText));
        return;
      }
      reject(new Error(refusalSentence(xhr.responseText, xhr.status)));
    };
    xhr.onerror = () => reject(new Error('The file could not be sent: the server cannot be reached.'));
    const form = new FormData();
    form.append('file', file, file.name);
    xhr.send(form);
  });
}

// Attachments lists the files attached to the message being written: an
// image's preview or a file's name, its upload's progress, a refusal's
// sentence, and Remove.
function Attachments({ items, onRemove }) {
  return (
    <ul className="attachments" data-testid="attachments">
      {items.map((f) => (
        <li key={f.key} className={'attachment-chip' + (f.error ? ' attachment-failed' : '')} data-testid="attachment" data-ready={f.part ? 'true' : 'false'}>
          {f.preview ? <img src={f.preview} alt="" className="attachment-preview" /> : <span className="attachment-name">{f.name}</span>}
          {!f.part && !f.error && <progress max={1} value={f.progress} aria-label={'Uploading ' + f.name} />}
          {f.error && (
            <span className="attachment-error" role="alert" data-testid="attachment-error">
              {f.error}
            </span>
          )}
          <button type="button" className="btn btn-small btn-quiet" data-testid="attachment-remove" aria-label={'Remove ' + f.name} onClick={() => onRemove(f.key)}>
            ×
          </button>
        </li>
      ))}
    </ul>
  );
}
