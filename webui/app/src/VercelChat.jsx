// The chat over the Vercel AI SDK UI message stream: useChat from
// @ai-sdk/react against POST /api/chat (the default transport's path), or
// over a WebSocket to the same path (the AI SDK 7's WebSocketChatTransport).
import { memo, useCallback, useEffect, useRef, useState } from 'react';
import { Chat, useChat } from '@ai-sdk/react';
import {
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
  WebSocketChatTransport,
} from 'ai';
import {
  Composer,
  CopyButton,
  ErrorBox,
  FailureBox,
  Json,
  Message,
  MessageList,
  NoReply,
  Pending,
  QueuedList,
  Reasoning,
  STOP_WAIT_MS,
  ToolCard,
  UserText,
  UserTurn,
  Usage,
  useQueue,
  Versions,
  useWhenIdle,
} from './ui.jsx';
import { Markdown } from './markdown.jsx';
import {
  BACK_ONLINE,
  BUSY_NOTICE,
  errorText,
  HELD_NOTICE,
  isOffline,
  loadVersions,
  loadConversation,
  loadStored,
  OFFLINE_LOAD,
  OFFLINE_REPLY,
  OFFLINE_SEND,
  REFILLED,
  refusalCode,
  rememberChat,
  stopChat,
  switchBranch,
  UNKNOWN_CHAT,
  UNKNOWN_CHAT_NOTICE,
  wasKnown,
  whenReachable,
} from './api.js';
import { yieldingFetch } from './yieldingFetch.js';
import { getLocation, LOCATION_TOOL } from './location.js';

// THROTTLE_MS bounds how often a streaming reply re-renders: a reply of
// 10,000 deltas is 10,000 updates, and rendering each would freeze the tab.
const THROTTLE_MS = 50;

// VercelChat loads the stored conversation (a reload, a past chat from the
// list, a shared link), then starts the chat with it. A chat id the page
// just made has nothing stored, so it is not fetched. A server that cannot
// be reached is tried again when it answers (or on Retry). A chat the
// server does not have, but this browser had replies in, is lost (the
// server restarted without its chats, or it expired): the page says so.
export function VercelChat({ chatId, transport, fresh, draft, autoSend, model, onTurnEnd, onNewChat }) {
  const [initial, setInitial] = useState(fresh ? { messages: [], lost: false } : null);
  const [loadFailure, setLoadFailure] = useState(null);
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    if (fresh) return undefined;
    const ctl = new AbortController();
    setLoadFailure(null);
    loadStored(chatId, ctl.signal).then(({ messages, found }) => {
      if (found) rememberChat(chatId);
      setInitial({ messages, lost: !found && wasKnown(chatId) });
    }, (e) => {
      if (ctl.signal.aborted) return;
      const offline = isOffline(e);
      setLoadFailure({ text: offline ? OFFLINE_LOAD : e.message, offline });
    });
    return () => ctl.abort();
  }, [chatId, fresh, attempt]);
  useEffect(() => {
    if (!loadFailure?.offline) return undefined;
    return whenReachable(() => setAttempt((n) => n + 1));
  }, [loadFailure]);

  if (initial === null) {
    return (
      <>
        <div className="messages-wrap">
          <p className="loading" data-testid="loading" role="status">
            Loading the conversation…
          </p>
        </div>
        <ErrorBox message={loadFailure?.text} onRetry={() => setAttempt((n) => n + 1)} />
      </>
    );
  }
  return (
    <Conversation
      chatId={chatId}
      transport={transport}
      initialMessages={initial.messages}
      lost={initial.lost}
      resume={!fresh && !initial.lost}
      draft={draft}
      autoSend={autoSend}
      model={model}
      onTurnEnd={onTurnEnd}
      onNewChat={onNewChat}
    />
  );
}

// storedFailure is what a stored conversation says went wrong, for the
// page to show as it did live: a lost chat, or a last reply that failed
// (its metadata carries the sentence the live stream ended with).
function storedFailure(messages, lost) {
  if (lost) return { kind: 'unknown', text: UNKNOWN_CHAT_NOTICE, draft: '' };
  const last = messages.at(-1);
  if (last?.role === 'assistant' && last.metadata?.finishReason === 'error') {
    return { kind: 'error', text: errorText(last.metadata.error || 'An error occurred.'), retry: 'regenerate' };
  }
  return null;
}

// Both kinds of continuation send themselves: answered approvals and
// client tool outputs.
function sendAutomaticallyWhen(options) {
  return lastAssistantMessageIsCompleteWithApprovalResponses(options) || lastAssistantMessageIsCompleteWithToolCalls(options);
}

const NONE = new Set();

function Conversation({ chatId, transport, initialMessages, lost, resume, draft, autoSend, model, onTurnEnd, onNewChat }) {
  // The transport is made once; the model picked goes with each request.
  const modelRef = useRef(model);
  modelRef.current = model;
  const [wire] = useState(() => {
    const body = () => (modelRef.current ? { model: modelRef.current } : {});
    if (transport === 'ws') return new WebSocketChatTransport({ url: '/api/chat', body });
    return new DefaultChatTransport({ api: '/api/chat', fetch: yieldingFetch, body });
  });
  // A continuation (answers to the last reply's approvals or client tool
  // calls) extends that reply: which one, and how many parts it had, to
  // tell a continuation that never got through from a reply that broke.
  const continued = useRef(null);
  // voided: the server voided a step of the streaming reply (its server
  // died mid-step, and another ran the step again). AI SDK 6 chunks
  // cannot remove its parts: the page hides them (hidden: the message and
  // the range of its parts), and loads the stored reply once it ends.
  const voided = useRef(false);
  const [hidden, setHidden] = useState(null);
  const [chat] = useState(() => {
    const c = new Chat({
      id: chatId,
      messages: initialMessages,
      transport: wire,
      sendAutomaticallyWhen,
      onToolCall: ({ toolCall }) => {
        if (toolCall.dynamic || toolCall.toolName !== LOCATION_TOOL) return;
        continued.current = { id: c.lastMessage?.id, parts: c.lastMessage?.parts.length };
        // Not awaited: awaiting addToolOutput inside onToolCall deadlocks
        // the chat's job queue.
        c.addToolOutput({ tool: LOCATION_TOOL, toolCallId: toolCall.toolCallId, output: getLocation() });
      },
      onFinish: () => {
        if (voided.current) {
          // The reply shows the step its dead server was streaming
          // beside the one another server ran again: once it ends, the
          // stored reply, which holds only the latter, replaces it.
          voided.current = false;
          loadConversation(chatId)
            .then((stored) => {
              c.messages = stored;
              setHidden(null);
            })
            .catch(() => {});
        }
        onTurnEnd?.();
      },
      // A message sent with "Send after it" is answered "queued" at once:
      // the list above the box shows it.
      onData: (part) => {
        if (part.type === 'data-queue') queueRef.current?.refresh();
        if (part.type === 'data-reset-step') {
          voided.current = true;
          const m = c.lastMessage;
          if (m?.role === 'assistant') setHidden({ id: m.id, from: m.parts.findLastIndex((p) => p.type === 'step-start'), to: m.parts.length });
        }
      },
    });
    return c;
  });
  const queueRef = useRef(null);
  // resume: a reply still being produced when the page loaded goes on
  // showing (GET /api/chat/{id}/stream; 204 when there is none).
  const { messages, status, error, sendMessage, stop, regenerate, addToolApprovalResponse, clearError, setMessages, resumeStream } = useChat({
    chat,
    resume,
    experimental_throttle: THROTTLE_MS,
  });
  // Leaving the chat (New chat, another chat, a switch) stops reading its
  // reply; the reply itself goes on on the server. Over a WebSocket that
  // is closing the socket: stop() would send abort, which stops the reply.
  useEffect(
    () => () => {
      if (wire instanceof WebSocketChatTransport) wire.close();
      else if (chat.status === 'submitted' || chat.status === 'streaming') chat.stop();
    },
    [chat, wire],
  );
  // failure is what went wrong, shown until the next attempt: {kind:
  // 'error' | 'offline' | 'back' | 'unknown' | 'note', text, retry: how
  // Retry tries again ('resend' | 'continue' | 'regenerate'), draft}. A
  // stored conversation shows what its last reply's failure showed live.
  const [failure, setFailure] = useState(() => storedFailure(initialMessages, lost));
  // refill puts a message the server refused back in the message box.
  const [refill, setRefill] = useState(null);
  // The server has the chat once a reply streams: after a restart that
  // loses it, a reload says so (wasKnown).
  useEffect(() => {
    if (status === 'streaming') rememberChat(chatId);
  }, [status, chatId]);
  // The replies that failed while this page showed them (a stored reply
  // says so itself: finishReason "error"). A reply's mark stays when
  // later messages fail too.
  const [failedIds, setFailedIds] = useState(NONE);
  useEffect(() => {
    if (!error) return undefined;
    const body = String(error.message ?? error);
    const code = refusalCode(body);
    const last = chat.lastMessage;
    if (code === 'busy') {
      // The server refused this tab's message because a reply is being
      // produced in this chat (409 "busy"): show that reply instead of
      // the refusal; it streams in (resume). It is another tab's when it
      // answers a message this page has not shown; otherwise it is the
      // reply this page lost, still held by the server (its server went
      // away, and the run is held until it is found dead). The refused
      // message goes back in the message box.
      const ctl = new AbortController();
      const shown = new Set(chat.messages.map((m) => m.id));
      loadConversation(chatId, ctl.signal)
        .then((stored) => {
          const answers = stored.findLast((m) => m.role === 'user');
          const refused = last?.role === 'user' && !stored.some((m) => m.id === last.id) ? textOf(last) : '';
          clearError();
          setMessages(stored);
          setFailure({ kind: 'note', text: (answers && shown.has(answers.id) ? HELD_NOTICE : BUSY_NOTICE) + (refused ? REFILLED : '') });
          if (refused) setRefill({ text: refused });
          return resumeStream();
        })
        // The held reply has ended: whatever happened to it shows, and
        // the note that it was held goes (an error replaced it already).
        .then(() => setFailure((f) => (f?.kind === 'note' && f.text.startsWith(HELD_NOTICE) ? null : f)))
        .catch((e) => {
          if (!ctl.signal.aborted) setFailure({ kind: 'error', text: errorText(e?.message ?? String(e)) });
        });
      return () => ctl.abort();
    }
    clearError();
    if (code === UNKNOWN_CHAT) {
      setFailure({ kind: 'unknown', text: UNKNOWN_CHAT_NOTICE, draft: last?.role === 'user' ? textOf(last) : '' });
      return undefined;
    }
    const offline = isOffline(error);
    const refused = body.trimStart().startsWith('{');
    let retry = 'regenerate';
    if (last?.role === 'user') retry = 'resend';
    else if (last && last.id === continued.current?.id && last.parts.length === continued.current.parts) retry = 'continue';
    if (last?.role === 'assistant' && !refused && retry === 'regenerate') setFailedIds((s) => new Set(s).add(last.id));
    let text = errorText(body);
    if (offline) text = retry === 'regenerate' ? OFFLINE_REPLY : OFFLINE_SEND;
    setFailure({ kind: offline ? 'offline' : 'error', text, retry });
    return undefined;
  }, [error, chat, chatId, clearError, setMessages, resumeStream]);

  // Once a server that could not be reached answers again, say so; Retry
  // tries again. (The chat list reloads too.)
  useEffect(() => {
    if (failure?.kind !== 'offline') return undefined;
    return whenReachable(() => {
      setFailure((f) =>
        f?.kind === 'offline' ? { ...f, kind: 'back', text: BACK_ONLINE + (f.retry === 'resend' ? ' Retry to send your message.' : ' Retry to get the reply.') } : f,
      );
      onTurnEnd?.();
    });
  }, [failure?.kind, onTurnEnd]);

  // The versions of messages that edits and regenerations made
  // (loadVersions): looked at for a stored chat as it loads, and again
  // when an edit's or a regeneration's reply has ended (branched).
  const [versions, setVersions] = useState({});
  const refreshVersions = useCallback(() => {
    loadVersions(chatId).then(setVersions, () => {});
  }, [chatId]);
  const branched = useRef(false);
  useEffect(() => {
    if (initialMessages.length > 0) refreshVersions();
  }, []); // eslint-disable-line react-hooks/exhaustive-deps
  useEffect(() => {
    if (status === 'ready' && branched.current) {
      branched.current = false;
      refreshVersions();
    }
  }, [status, refreshVersions]);

  const [editing, setEditing] = useState(null); // the id of the user message being edited
  const busy = status === 'submitted' || status === 'streaming';
  const queue = useQueue(chatId, busy, (e) => setFailure({ kind: 'error', text: errorText(e?.message ?? String(e)) }));
  queueRef.current = queue;
  // A reply that begins or ends may be a queued message's turn.
  const replyCount = messages.filter((m) => m.role === 'assistant').length;
  const { refresh: refreshQueue } = queue;
  useEffect(() => {
    refreshQueue();
  }, [replyCount, status, refreshQueue]);

  // The callbacks messages get stay the same objects, so a finished
  // message does not render again while the next one streams.
  const live = useRef({});
  live.current = {
    busy,
    chatId,
    setMessages,
    refreshVersions,
    sendMessage,
    regenerate,
    addToolApprovalResponse,
    setFailure,
    setEditing,
    continued: () => (continued.current = { id: chat.lastMessage?.id, parts: chat.lastMessage?.parts.length }),
    branching: () => (branched.current = true),
  };
  const [actions] = useState(() => {
    const report = (p) => p.catch((e) => live.current.setFailure({ kind: 'error', text: errorText(e?.message ?? String(e)) }));
    return {
      report,
      answer: (approvalId, approved, reason) => {
        live.current.setFailure(null);
        live.current.continued();
        report(live.current.addToolApprovalResponse({ id: approvalId, approved, reason }));
      },
      edit: (id) => live.current.setEditing(id),
      // Another version of a message: the server makes its branch the
      // active one, and the page shows the chat as then stored.
      pickVersion: (id) => {
        const { chatId: chat, setMessages: show, refreshVersions: again } = live.current;
        live.current.setFailure(null);
        report(
          switchBranch(chat, id)
            .then(() => loadConversation(chat))
            .then((stored) => {
              show(stored);
              again();
            }),
        );
      },
      cancelEdit: () => live.current.setEditing(null),
      // An edited message replaces the one with its id, and everything
      // after it is answered again (the server truncates its copy there).
      saveEdit: (id, text) => {
        live.current.setEditing(null);
        live.current.setFailure(null);
        live.current.branching();
        report(live.current.sendMessage({ text, messageId: id }));
      },
      regenerate: () => {
        live.current.setFailure(null);
        live.current.branching();
        report(live.current.regenerate());
      },
    };
  });
  // The run outlives its request: Stop asks the server to stop it.
  // The stream then ends with the server's end of the run; a server that
  // does not end it soon (it could not be reached) is stopped reading.
  const whenIdle = useWhenIdle(busy);
  const stopRun = async () => {
    await stopChat(chatId, '/api/chat');
    if (!(await whenIdle(STOP_WAIT_MS))) await stop();
  };
  // send sends a message; whileBusy ('steer' | 'queue' | 'interrupt')
  // says what it is for when a reply is running (the server's "busy").
  const send = (text, whileBusy, files = []) => {
    // A chat the server no longer has takes no more messages: this one
    // starts a new chat (sent there at once).
    if (failure?.kind === 'unknown') {
      onNewChat(text, true);
      return;
    }
    setFailure(null);
    const message = files.length ? { ...(text ? { text } : {}), files } : { text };
    actions.report(sendMessage(message, whileBusy ? { body: { busy: whileBusy } } : undefined));
    if (whileBusy === 'queue' && wire instanceof WebSocketChatTransport) queue.soon();
  };
  // A new chat started with a message sends it at once.
  const sent = useRef(false);
  useEffect(() => {
    if (!autoSend || !draft || sent.current) return;
    sent.current = true;
    actions.report(sendMessage({ text: draft }));
  }, [autoSend, draft, actions, sendMessage]);
  // Retry does again what failed: sends the message that did not get
  // through, sends the answers the last reply waits for, or asks for the
  // failed reply again.
  const retry = () => {
    const how = failure?.retry;
    const last = chat.lastMessage;
    setFailure(null);
    if (how === 'resend' && last?.role === 'user') actions.report(sendMessage({ text: textOf(last), messageId: last.id }));
    else if (how === 'continue') actions.report(sendMessage());
    else {
      branched.current = true;
      actions.report(regenerate());
    }
  };

  // A message the running reply took shows in the reply, where it
  // answers it; the copy sendMessage appended at the end is not shown,
  // nor, until its turn runs, a queued message's (the list shows it).
  // One removed from the queue goes from the thread too.
  // A queued message whose turn has begun (its reply follows it) no
  // longer waits, whatever the last look at the queue said.
  const waiting = queue.items.filter((q) => {
    const i = messages.findIndex((m) => m.id === q.id);
    return i < 0 || messages[i + 1]?.role !== 'assistant';
  });
  const queuedIds = new Set(waiting.map((q) => q.id));
  const shown = withoutSteeredCopies(messages).filter((m) => !(m.role === 'user' && queuedIds.has(m.id)));
  const unqueue = (id) => {
    queue.remove(id);
    setMessages(chat.messages.filter((m) => m.id !== id));
  };
  const last = shown.at(-1);
  const contentKey = shown.length + ':' + partsLength(last) + ':' + status;
  return (
    <>
      <MessageList empty={messages.length === 0 && failure?.kind !== 'unknown'} contentKey={contentKey} pinKey={messages.filter((m) => m.role === 'user').length} onSuggest={send}>
        {shown.map((m, i) => (
          <VercelMessage
            key={m.id}
            message={m}
            versions={versions[m.id]}
            isLast={i === shown.length - 1}
            busy={busy && i === shown.length - 1}
            anyBusy={busy}
            failed={failedIds.has(m.id) || m.metadata?.finishReason === 'error'}
            editing={editing === m.id}
            hidden={hidden?.id === m.id ? hidden : null}
            actions={actions}
          />
        ))}
        {status === 'submitted' && last?.role !== 'assistant' && <Pending />}
        {!busy && !failure && lastShown(shown, failedIds)?.role === 'user' && <NoReply />}
      </MessageList>
      <FailureBox failure={failure} onRetry={retry} onDismiss={() => setFailure(null)} onNewChat={onNewChat} />
      <QueuedList items={waiting} onRemove={unqueue} />
      <Composer
        status={status}
        busy={busy}
        draft={autoSend ? '' : draft}
        refill={refill}
        statusText={busy ? 'The assistant is replying…' : last?.role === 'assistant' ? 'The reply is finished.' : ''}
        onSend={send}
        canAttach
        onStop={() => actions.report(stopRun())}
      />
    </>
  );
}

// isSteering tells the parts a reply shows for the messages it took
// while it ran: AI SDK 7's steering-message, or the data part agentui
// sends AI SDK 5 and 6 in its place.
const isSteering = (p) => p.type === 'steering-message' || p.type === 'data-steering-message';

// withoutSteeredCopies is messages without the user messages a reply
// shows as taken (the same array when there are none).
function withoutSteeredCopies(messages) {
  const ids = new Set();
  for (const m of messages) if (m.role === 'assistant') for (const p of m.parts) if (isSteering(p)) ids.add(p.id);
  return ids.size === 0 ? messages : messages.filter((m) => !(m.role === 'user' && ids.has(m.id)));
}

function partsLength(m) {
  let n = 0;
  for (const p of m?.parts ?? []) n += (p.text?.length ?? 0) + 1;
  return n;
}

// visible tells whether a part shows anything (a reply stopped before its
// first word holds only a step-start).
function visible(part) {
  return part.type !== 'step-start' && !(part.type === 'text' && !part.text);
}

// empty tells whether a finished reply shows nothing: one stopped before
// its first word, which the server does not store. It is not shown, so
// the chat reads the same before and after a reload: a message with no
// reply (NoReply).
const empty = (m, failed) => m.role === 'assistant' && !failed && m.metadata?.finishReason !== 'error' && !m.parts.some(visible);

// lastShown is the last message the chat shows.
function lastShown(messages, failedIds) {
  return messages.findLast((m) => !empty(m, failedIds.has(m.id)));
}

function textOf(m) {
  return m.parts
    .filter((p) => p.type === 'text')
    .map((p) => p.text)
    .join('\n\n');
}

// VercelMessage is one message; it renders again only when its message,
// or whether it is the last or busy one, changes.
const VercelMessage = memo(function VercelMessage({ message: m, isLast, busy, anyBusy, failed, editing, versions, hidden, actions }) {
  const streaming = busy && m.role === 'assistant';
  if (m.role === 'user') {
    return (
      <UserTurn id={m.id} text={textOf(m)} editing={editing} busy={anyBusy} actions={actions} versions={versions}>
        {m.parts.map((part, j) => (
          <Part key={j} part={part} role="user" busy={anyBusy} current={isLast} onAnswer={actions.answer} />
        ))}
      </UserTurn>
    );
  }
  const text = textOf(m);
  const done = !streaming;
  if (done && empty(m, failed)) return null;
  return (
    <Message
      role={m.role}
      id={m.id}
      streaming={streaming}
      failed={failed}
      began={m.parts.some(visible)}
      actions={
        done && (
          <>
            <Versions versions={versions} busy={anyBusy} onPick={actions.pickVersion} />
            {text && <CopyButton text={text} />}
            {isLast && (
              <button type="button" className="btn btn-small btn-quiet" data-testid="regenerate" disabled={anyBusy} onClick={actions.regenerate} title="Answer the last message again">
                Regenerate
              </button>
            )}
          </>
        )
      }
      footer={done && <Usage usage={m.metadata?.usage} model={m.metadata?.model} />}
    >
      {m.parts.map((part, j) =>
        hidden && j >= hidden.from && j < hidden.to ? null : (
          <Part key={j} part={part} role={m.role} busy={anyBusy} streaming={streaming} current={isLast} onAnswer={actions.answer} />
        ),
      )}
    </Message>
  );
});

function Part({ part, role, busy, streaming, current, onAnswer }) {
  switch (part.type) {
    case 'text':
      if (!part.text) return null;
      return role === 'user' ? <UserText text={part.text} /> : <Markdown text={part.text} />;
    case 'reasoning':
      // A stopped reply leaves its reasoning "streaming": it is not.
      return <Reasoning text={part.text} streaming={streaming && part.state === 'streaming'} />;
    case 'step-start':
      return null;
    case 'steering-message':
    case 'data-steering-message': {
      const text = (part.parts ?? part.data?.parts ?? []).filter((q) => q.type === 'text').map((q) => q.text).join('\n\n');
      return (
        <div className="steered" data-testid="steered">
          <UserText text={text} />
        </div>
      );
    }
    case 'source-url':
      return (
        <a className="source" href={part.url} target="_blank" rel="noreferrer noopener">
          {part.title || part.url}
        </a>
      );
    case 'source-document':
      return <span className="source">{part.title}</span>;
    case 'file':
      if (part.mediaType?.startsWith('image/')) {
        return (
          <a className="attached-image" href={part.url} target="_blank" rel="noreferrer noopener" data-testid="attached-image">
            <img src={part.url} alt={part.filename || 'an attached image'} loading="lazy" />
          </a>
        );
      }
      return (
        <a className="source" href={part.url} download={part.filename} target="_blank" rel="noreferrer noopener" data-testid="attached-file">
          {part.filename || part.mediaType || 'file'}
        </a>
      );
    default:
      break;
  }
  if (part.type === 'dynamic-tool' || part.type.startsWith('tool-')) {
    const name = part.type === 'dynamic-tool' ? part.toolName : part.type.slice('tool-'.length);
    // Only the last message's approvals can still be answered: a message
    // sent while one waited moved the conversation on without it.
    const stale = part.state === 'approval-requested' && !current;
    return (
      <ToolCard
        id={part.toolCallId}
        name={name}
        state={stale ? 'approval-expired' : part.state}
        input={part.input}
        output={part.output}
        preliminary={part.state === 'output-available' && part.preliminary}
        errorText={part.errorText}
        approval={part.approval}
        busy={busy}
        onApprove={() => onAnswer(part.approval.id, true)}
        onDeny={(reason) => onAnswer(part.approval.id, false, reason)}
      />
    );
  }
  if (part.type.startsWith('data-')) {
    return (
      <div className="data-part">
        <Json value={part.data} />
      </div>
    );
  }
  return null;
}
