// The chat over AG-UI 1.0: HttpAgent from @ag-ui/client (with agentui's
// connect and stop, agentuiAgent.js) against POST /api/agui, with the
// chat id as the thread id. A reload connects: the thread comes back with
// its open approvals, and a reply still being produced goes on showing.
// The page answers the get_location frontend tool and the server's
// approval interrupts.
import { memo, useCallback, useEffect, useRef, useState } from 'react';
import * as agui from '@ag-ui/client';
import { agentuiAgent } from './agentuiAgent.js';
import { generateId } from './ids.js';
import { Composer, CopyButton, FailureBox, Message, MessageList, NoReply, Pending, QueuedList, Reasoning, STOP_WAIT_MS, ToolCard, UserText, UserTurn, Usage, useQueue, useWhenIdle, Versions } from './ui.jsx';
import { Markdown } from './markdown.jsx';
import {
  BACK_ONLINE,
  BUSY_NOTICE,
  errorText,
  HELD_NOTICE,
  isOffline,
  loadStored,
  loadVersions,
  OFFLINE_LOAD,
  OFFLINE_REPLY,
  OFFLINE_SEND,
  REFILLED,
  rememberChat,
  UNKNOWN_CHAT,
  UNKNOWN_CHAT_NOTICE,
  switchBranch,
  wasKnown,
  whenReachable,
} from './api.js';
import { yieldingFetch } from './yieldingFetch.js';
import { getLocation, LOCATION_TOOL, locationToolDeclaration } from './location.js';

const TOOLS = [locationToolDeclaration];
// A run that only hands back frontend tool results goes round again; this
// bounds a model that keeps calling tools.
const MAX_ROUNDS = 8;
const AgentuiAgent = agentuiAgent(agui);

// When a stream breaks (the server went away), @ag-ui/client reports the
// error to the run, which the page shows, and then, tearing the stream
// down, cancels its reader and throws the same error again where nothing
// can catch it. That second report is no news: it is not logged.
window.addEventListener('unhandledrejection', (e) => {
  if (isOffline(e.reason)) e.preventDefault();
});

// THROTTLE_MS bounds how often a streaming reply re-renders (see
// VercelChat).
const THROTTLE_MS = 50;

export function AguiChat({ chatId, fresh, draft, autoSend, model, onTurnEnd, onNewChat }) {
  const modelRef = useRef(model);
  modelRef.current = model;
  const [agent] = useState(() => new AgentuiAgent({ url: '/api/agui', threadId: chatId, fetch: yieldingFetch }));
  const [messages, setMessages] = useState([]);
  const [running, setRunning] = useState(false);
  // queuedRunning: a queued message's turn runs, which its own agent
  // reads (enqueue) and this page shows.
  const [queuedRunning, setQueuedRunning] = useState(false);
  // failure is what went wrong, as in VercelChat: {kind, text, retry:
  // 'again' (the same run) | 'regenerate' | 'connect', draft}.
  const [failure, setFailure] = useState(null);
  const [interrupts, setInterrupts] = useState([]);
  const [answers, setAnswers] = useState({}); // interrupt id → payload, until the resume is sent
  const [decisions, setDecisions] = useState({}); // tool call id → {approved, reason} or {expired}, for the chat's life
  const [usage, setUsage] = useState({}); // assistant turn id → its runs' RUN_FINISHED usage, summed
  // assistant turn id → true; AFTER + a user turn's id: the reply to it
  // failed before it began (the server stores it as an empty failed reply)
  const [failedTurns, setFailedTurns] = useState({});
  const [refill, setRefill] = useState(null); // a refused message, back in the message box
  const [editing, setEditing] = useState(null);
  const stopping = useRef(false);
  // started: the server has begun the run this page asked for or follows
  // (its RUN_STARTED came). A Stop before that is sent once it comes: the
  // server has no run to stop until then.
  const started = useRef(false);
  const lastRun = useRef({}); // the last run's parameters, for Retry
  const queue = useQueue(chatId, running || queuedRunning, (e) => setFailure({ kind: 'error', text: errorText(e?.message ?? String(e)) }));
  // The versions of messages that edits and regenerations made (the
  // server keeps every branch; its AG-UI tree route lists them with the
  // ids this thread has): looked at when a stored thread loads and when an
  // edit's or a regeneration's run has ended.
  const [versions, setVersions] = useState({});
  const refreshVersions = useCallback(() => {
    loadVersions(chatId, '/api/agui').then(setVersions, () => {});
  }, [chatId]);

  useEffect(() => {
    // Streamed events change the thread many times a frame: show the
    // latest at most every THROTTLE_MS.
    let timer = null;
    const flush = () => {
      timer = null;
      setMessages([...agent.messages]);
    };
    const sub = agent.subscribe({
      onMessagesChanged: () => {
        timer ??= setTimeout(flush, THROTTLE_MS);
      },
      onRunStartedEvent: () => {
        started.current = true;
        if (stopping.current) stopStarted.current();
      },
      // The reply failed on the server (or a resumed one was cut short):
      // its turn is marked. Stop makes the client report an "abort",
      // which is no failure.
      onRunErrorEvent: ({ event, messages: now }) => {
        if (event.code === 'abort' || stopping.current) return;
        const turn = lastAssistantTurn(now);
        const lastUser = now.findLast((m) => m.role === 'user');
        if (turn) setFailedTurns((m) => ({ ...m, [turn]: true }));
        else if (lastUser) setFailedTurns((m) => ({ ...m, [AFTER + lastUser.id]: true }));
        setFailure({ kind: 'error', text: errorText(event.message || 'The run failed.'), retry: 'regenerate' });
      },
      // Usage comes with the run's end, whether this page started the
      // run or followed it after a reload (connect). AG-UI 1.0's usage is
      // a list, one entry per model. A turn of several runs (an approval
      // answered, a frontend tool's result) shows them summed, as its
      // stored steps do after a reload.
      onRunFinishedEvent: ({ event, messages: now }) => {
        const list = event?.usage;
        const turn = lastAssistantTurn(now);
        if (!Array.isArray(list) || list.length === 0 || !turn) return;
        const sum = (k) => list.reduce((n, u) => n + (u[k] ?? 0), 0);
        const run = { inputTokens: sum('inputTokens'), outputTokens: sum('outputTokens'), reasoningTokens: sum('reasoningTokens') };
        const model = list.map((x) => x.model).filter(Boolean).join(', ');
        setUsage((m) => {
          const had = m[turn] ?? storedUsage(groupTurns(now).at(-1));
          const u = had ? Object.fromEntries(Object.keys(run).map((k) => [k, run[k] + (had.usage[k] ?? 0)])) : run;
          return { ...m, [turn]: { usage: u, model: model || had?.model } };
        });
      },
    });
    return () => {
      sub.unsubscribe();
      clearTimeout(timer);
      if (agent.isRunning) agent.abortRun();
    };
  }, [agent]);

  // connect shows the thread as the server has it (its past, open
  // approvals, a reply being produced), running nothing. A thread the
  // server has none of, which this browser had replies in, is lost (the
  // server restarted without its chats, or it expired); a thread whose
  // last reply failed shows that failure, as it did live.
  const connect = useCallback(() => {
    setRunning(true);
    stopping.current = false;
    started.current = false;
    let thrown = null;
    return agent
      .connectAgent(undefined, {
        // Handled here: the client would log it and throw.
        onRunFailed: ({ error }) => {
          thrown = error;
          return { stopPropagation: true };
        },
      })
      .finally(() => {
        setRunning(false);
        setMessages([...agent.messages]);
        setInterrupts([...(agent.pendingInterrupts ?? [])]);
        if (thrown && !stopping.current && thrown.name !== 'AbortError') {
          const offline = isOffline(thrown);
          setFailure({ kind: offline ? 'offline' : 'error', text: offline ? OFFLINE_LOAD : errorText(thrown.message), retry: 'connect' });
          return;
        }
        if (thrown) return;
        if (agent.messages.length > 0) {
          rememberChat(chatId);
          refreshVersions();
        } else if (wasKnown(chatId)) {
          setFailure({ kind: 'unknown', text: UNKNOWN_CHAT_NOTICE, draft: '' });
          return;
        }
        const stored = storedFailure(agent.messages);
        if (stored) setFailure((f) => f ?? stored);
      });
  }, [agent, chatId, refreshVersions]);
  // A thread the page did not just make may have all of that.
  useEffect(() => {
    if (!fresh) connect();
  }, [connect, fresh]);

  const run = async (params = {}) => {
    setRunning(true);
    setFailure(null);
    setInterrupts([]);
    setAnswers({});
    stopping.current = false;
    started.current = false;
    lastRun.current = params;
    const before = new Set(agent.messages.map((m) => m.id));
    let thrown = null;
    try {
      let next = params;
      for (let round = 0; round < MAX_ROUNDS; round++) {
        let pending = [];
        let failed = false;
        await agent.runAgent(
          { tools: TOOLS, forwardedProps: modelRef.current ? { model: modelRef.current } : {}, ...next },
          {
            // The server has the thread once a run of it starts: after a
            // restart that loses it, a reload says so (wasKnown).
            onRunStartedEvent: () => rememberChat(chatId),
            onRunFinishedEvent: (p) => {
              if (p.outcome === 'success') pending = p.pendingToolCallIds ?? [];
            },
            onRunErrorEvent: () => {
              failed = true;
            },
            // Handled below: the client would log it and throw.
            onRunFailed: ({ error }) => {
              thrown = error;
              return { stopPropagation: true };
            },
          },
        );
        if (failed || thrown || stopping.current) break;
        const answered = new Set(agent.messages.filter((m) => m.role === 'tool').map((m) => m.toolCallId));
        const calls = agent.messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []) : []));
        const mine = pending
          .map((id) => calls.find((c) => c.id === id))
          .filter((c) => c && c.function.name === LOCATION_TOOL && !answered.has(c.id));
        if (mine.length === 0) break;
        for (const call of mine) {
          agent.addMessage({ id: generateId(), role: 'tool', toolCallId: call.id, content: JSON.stringify(getLocation()) });
        }
        setMessages([...agent.messages]);
        next = {};
      }
    } catch (e) {
      thrown = e;
    } finally {
      setRunning(false);
      setMessages([...agent.messages]);
      setInterrupts([...(agent.pendingInterrupts ?? [])]);
      onTurnEnd?.();
    }
    if (!thrown || stopping.current || thrown.name === 'AbortError') return;
    const last = agent.messages.at(-1);
    if (thrown.status === 409 && thrown.payload?.code === 'busy') {
      // A reply is being produced in this thread: show it instead of the
      // refusal. It is another tab's (or device's) when it answers a
      // message this page has not shown; otherwise it is the reply this
      // page lost, still held by the server (its server went away, and the
      // run is held until it is found dead). connect replaces the thread
      // with the server's (without the refused message, which goes back in
      // the message box) and follows the reply.
      const shown = new Set(agent.messages.map((m) => m.id));
      let text = BUSY_NOTICE;
      let refused = '';
      try {
        const { messages: stored } = await loadStored(chatId);
        const answers = stored.findLast((m) => m.role === 'user');
        if (answers && shown.has(answers.id)) text = HELD_NOTICE;
        if (last?.role === 'user' && !stored.some((m) => m.id === last.id)) refused = userText(last.content);
      } catch {
        // the notice stays the general one
      }
      setFailure({ kind: 'note', text: text + (refused ? REFILLED : '') });
      if (refused) setRefill({ text: refused });
      await connect();
      // The held reply has ended: whatever happened to it shows, and
      // the note that it was held goes (an error replaced it already).
      setFailure((f) => (f?.kind === 'note' && f.text.startsWith(HELD_NOTICE) ? null : f));
      return;
    }
    if (thrown.status === 409 && thrown.payload?.code === UNKNOWN_CHAT) {
      setFailure({ kind: 'unknown', text: UNKNOWN_CHAT_NOTICE, draft: last?.role === 'user' ? userText(last.content) : '' });
      return;
    }
    // A reply that had begun when the run broke is marked, and Retry asks
    // for it again; otherwise Retry makes the same run again.
    const begun = agent.messages.some((m) => !before.has(m.id) && m.role !== 'user' && m.role !== 'tool');
    const turn = begun ? lastAssistantTurn(agent.messages) : null;
    if (turn) setFailedTurns((m) => ({ ...m, [turn]: true }));
    const offline = isOffline(thrown);
    let text = errorText(thrown.payload?.error ?? thrown.message ?? String(thrown));
    if (offline) text = begun ? OFFLINE_REPLY : OFFLINE_SEND;
    setFailure({ kind: offline ? 'offline' : 'error', text, retry: begun ? 'regenerate' : 'again' });
  };

  // Once a server that could not be reached answers again: a thread that
  // could not be loaded is loaded; otherwise the page says so, and Retry
  // tries again. (The chat list reloads too.)
  useEffect(() => {
    if (failure?.kind !== 'offline') return undefined;
    return whenReachable(() => {
      onTurnEnd?.();
      if (failure.retry === 'connect') {
        setFailure(null);
        connect();
        return;
      }
      setFailure((f) => (f?.kind === 'offline' ? { ...f, kind: 'back', text: BACK_ONLINE + (f.retry === 'again' ? ' Retry to send your message.' : ' Retry to get the reply.') } : f));
    });
  }, [failure, onTurnEnd, connect]);

  // A message sent while approvals wait moves on without them (as useChat
  // does): the run cancels their interrupts, and the server answers them
  // "not answered".
  // While a run goes on, whileBusy says what the message is for:
  // 'interrupt' stops the run, then sends it; 'steer' gives it to the run
  // (steer).
  const send = (text, whileBusy, files = []) => {
    // A chat the server no longer has takes no more messages: this one
    // starts a new chat (sent there at once).
    if (failure?.kind === 'unknown') {
      onNewChat(text, true);
      return;
    }
    if (whileBusy === 'interrupt') {
      stop().then(() => send(text, undefined, files));
      return;
    }
    if (whileBusy === 'steer') {
      steer(text);
      return;
    }
    if (whileBusy === 'queue') {
      enqueue(text);
      return;
    }
    const open = interrupts;
    agent.addMessage({ id: generateId(), role: 'user', content: files.length ? withFiles(text, files) : text });
    setMessages([...agent.messages]);
    if (open.length === 0) {
      run();
      return;
    }
    setDecisions((d) => ({ ...d, ...Object.fromEntries(open.filter((it) => it.toolCallId).map((it) => [it.toolCallId, { expired: true }])) }));
    run({ resume: open.map((it) => ({ interruptId: it.id, status: 'cancelled' })) });
  };

  // steer sends a message to the running run from an agent of its own
  // (this page's is busy reading the run), with forwardedProps {busy:
  // "steer"}: the run takes it after its current step, and its stream,
  // which this page reads, shows it where the reply answers it. A run
  // that ended first leaves it a turn of its own, which the helper agent
  // got: the page loads the thread then.
  const steer = async (text) => {
    const helper = new AgentuiAgent({ url: '/api/agui', threadId: chatId, fetch: yieldingFetch });
    helper.setMessages([...agent.messages.filter((m) => m.role === 'user'), { id: generateId(), role: 'user', content: text }]);
    let thrown = null;
    await helper
      .runAgent(
        { tools: TOOLS, forwardedProps: { busy: 'steer', ...(modelRef.current ? { model: modelRef.current } : {}) } },
        {
          onRunFailed: ({ error }) => {
            thrown = error;
            return { stopPropagation: true };
          },
        },
      )
      .catch((e) => {
        thrown = e;
      });
    if (thrown) {
      setFailure({ kind: 'error', text: errorText(thrown.payload?.error ?? thrown.message ?? String(thrown)), retry: 'connect' });
      setRefill({ text });
      return;
    }
    if (helper.messages.some((m) => m.role === 'assistant')) await connect();
  };

  // enqueue sends a message to wait on the server until the running run
  // has ended, from an agent of its own, with forwardedProps {busy:
  // "queue"}: its run says "queued" at once (the list above the box
  // shows it) and, once the chat is free, streams the message's own turn
  // with the thread as the server has it, which this page then shows as
  // it comes.
  const enqueue = async (text) => {
    const helper = new AgentuiAgent({ url: '/api/agui', threadId: chatId, fetch: yieldingFetch });
    helper.setMessages([...agent.messages.filter((m) => m.role === 'user'), { id: generateId(), role: 'user', content: text }]);
    let thrown = null;
    let turn = false; // its turn has begun
    const shown = (msgs) => msgs.filter((m) => m.role !== 'activity' || m.activityType !== 'queue');
    await helper
      .runAgent(
        { tools: TOOLS, forwardedProps: { busy: 'queue', ...(modelRef.current ? { model: modelRef.current } : {}) } },
        {
          onEvent: ({ event }) => {
            if (event.type === 'ACTIVITY_SNAPSHOT' && event.activityType === 'queue') queue.refresh();
            else if (!turn && !NOT_A_TURN.has(event.type)) {
              turn = true;
              setQueuedRunning(true);
              queue.refresh();
            }
          },
          onMessagesChanged: ({ messages: msgs }) => {
            if (turn) setMessages(shown(msgs));
          },
          onRunFailed: ({ error }) => {
            thrown = error;
            return { stopPropagation: true };
          },
        },
      )
      .catch((e) => {
        thrown = e;
      });
    setQueuedRunning(false);
    queue.refresh();
    if (turn) {
      agent.setMessages(shown(helper.messages));
      setMessages([...agent.messages]);
      onTurnEnd?.();
    }
    if (thrown && !turn && thrown.name !== 'AbortError') {
      setFailure({ kind: 'error', text: errorText(thrown.payload?.error ?? thrown.message ?? String(thrown)), retry: 'connect' });
      setRefill({ text });
    }
  };

  // Stop asks the server to stop the run (it outlives this request); the
  // stream then ends with the server's own end of the run, as useChat's
  // does, so the reply shows as far as it is stored. A server that does
  // not end it soon (it could not be reached) is stopped reading.
  // A Stop before the server has begun the run waits for it to begin
  // (its RUN_STARTED sends the stop), as long as a request may take to
  // get an answer under load.
  const whenIdle = useWhenIdle(running);
  const stopStarted = useRef(null);
  stopStarted.current = async () => {
    await agent.stop().catch(() => {});
    if (!(await whenIdle(STOP_WAIT_MS))) agent.abortRun();
  };
  const stop = async () => {
    stopping.current = true;
    if (started.current) await stopStarted.current();
    else if (!(await whenIdle(UNSTARTED_STOP_WAIT_MS))) agent.abortRun();
  };

  // Regenerate: keep the thread up to the last user message and run again;
  // the server truncates its copy there too.
  const regenerate = () => {
    const i = agent.messages.findLastIndex((m) => m.role === 'user');
    if (i < 0) return;
    agent.setMessages(agent.messages.slice(0, i + 1));
    setMessages([...agent.messages]);
    run().finally(refreshVersions);
  };

  // Retry does again what failed.
  const retry = () => {
    const how = failure?.retry;
    setFailure(null);
    if (how === 'connect') connect();
    else if (how === 'regenerate') regenerate();
    else run(lastRun.current);
  };

  // Editing a sent message: the thread up to it, the new text under the
  // same id, and a run; the server replaces its copy of that message and
  // drops what followed (as useChat's edit does).
  const saveEdit = (id, text) => {
    setEditing(null);
    const i = agent.messages.findIndex((m) => m.id === id);
    if (i < 0) return;
    agent.setMessages(agent.messages.slice(0, i));
    agent.addMessage({ id, role: 'user', content: text });
    setMessages([...agent.messages]);
    run().finally(refreshVersions);
  };

  // Another version of a message: the server makes its branch the active
  // one, and the reconnect's snapshot shows the thread as then stored.
  const pickVersion = (id) => {
    setFailure(null);
    switchBranch(chatId, id, '/api/agui')
      .then(connect)
      .catch((e) => setFailure({ kind: 'error', text: errorText(e?.message ?? String(e)) }));
  };

  // Every open interrupt must be answered in one resume.
  const answer = (interrupt, approved, reason) => {
    const payload = reason ? { approved, reason } : { approved };
    const next = { ...answers, [interrupt.id]: payload };
    setAnswers(next);
    if (interrupt.toolCallId) setDecisions((d) => ({ ...d, [interrupt.toolCallId]: payload }));
    if (interrupts.every((it) => next[it.id])) {
      run({ resume: interrupts.map((it) => ({ interruptId: it.id, status: 'resolved', payload: next[it.id] })) });
    }
  };
  const live = useRef({});
  live.current = { answer, regenerate, saveEdit, setEditing, send, pickVersion };
  const [actions] = useState(() => ({
    answer: (...a) => live.current.answer(...a),
    regenerate: () => live.current.regenerate(),
    saveEdit: (id, text) => live.current.saveEdit(id, text),
    edit: (id) => live.current.setEditing(id),
    cancelEdit: () => live.current.setEditing(null),
    pickVersion: (id) => live.current.pickVersion(id),
  }));

  // A new chat started with a message sends it at once.
  const sent = useRef(false);
  useEffect(() => {
    if (!autoSend || !draft || sent.current) return;
    sent.current = true;
    live.current.send(draft);
  }, [autoSend, draft]);

  const showsRun = running || queuedRunning;
  const turns = withFailedStarts(groupTurns(messages), failedTurns);
  const results = new Map(messages.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m]));
  const progress = new Map(
    messages.filter((m) => m.role === 'activity' && m.activityType === 'tool-progress').map((m) => [m.content.toolCallId, m.content.output]),
  );
  const byCall = new Map(interrupts.filter((it) => it.toolCallId).map((it) => [it.toolCallId, it]));
  const lastMsg = messages.at(-1);
  const contentKey = messages.length + ':' + (typeof lastMsg?.content === 'string' ? lastMsg.content.length : 0) + ':' + showsRun;
  const lastTurn = turns.at(-1);
  return (
    <>
      <MessageList empty={messages.length === 0 && failure?.kind !== 'unknown'} contentKey={contentKey} pinKey={turns.filter((t) => t.role === 'user').length} onSuggest={send}>
        {turns.map((turn, i) => {
          const isLast = i === turns.length - 1;
          return (
            <AguiTurn
              key={turn.id}
              turn={turn}
              isLast={isLast}
              streaming={showsRun && isLast && turn.role === 'assistant'}
              running={showsRun}
              results={turn.role === 'assistant' ? results : null}
              progress={turn.role === 'assistant' && isLast ? progress : null}
              interrupts={turn.role === 'assistant' && isLast ? byCall : null}
              answers={isLast ? answers : null}
              decisions={decisions}
              usage={usage[turn.id]}
              failed={!!failedTurns[turn.id]}
              editing={editing === turn.id}
              versions={versionsOf(turn, versions)}
              canRegenerate={isLast && interrupts.length === 0}
              actions={actions}
            />
          );
        })}
        {showsRun && lastTurn?.role !== 'assistant' && <Pending />}
        {!showsRun && !failure && lastTurn?.role === 'user' && <NoReply />}
      </MessageList>
      <FailureBox failure={failure} onRetry={retry} onDismiss={() => setFailure(null)} onNewChat={onNewChat} />
      <QueuedList items={queue.items} onRemove={queue.remove} />
      <Composer
        status={showsRun ? 'streaming' : interrupts.length ? 'awaiting-approval' : 'ready'}
        busy={showsRun}
        draft={autoSend ? '' : draft}
        refill={refill}
        statusText={showsRun ? 'The assistant is replying…' : lastTurn?.role === 'assistant' ? 'The reply is finished.' : ''}
        onSend={send}
        canAttach
        onStop={stop}
      />
    </>
  );
}

// UNSTARTED_STOP_WAIT_MS is how long a Stop pressed before the server
// began the run waits for it to begin before it stops reading.
const UNSTARTED_STOP_WAIT_MS = 20000;

// NOT_A_TURN are the events of a queued message's run that do not show
// its turn: its start, its outcome, and its end (a message removed from
// the queue ends its run with no turn).
const NOT_A_TURN = new Set(['RUN_STARTED', 'ACTIVITY_SNAPSHOT', 'RUN_FINISHED', 'RUN_ERROR']);

// AFTER prefixes the key (in failedTurns) of a reply that failed before it
// began, by the user message it answered.
const AFTER = 'after:';

// withFailedStarts adds to turns the replies that failed before they
// began: live, the thread holds no message for them; after a reload it
// holds the empty reply the server stored, which then stands instead.
function withFailedStarts(turns, failedTurns) {
  const out = [];
  turns.forEach((t, i) => {
    out.push(t);
    if (t.role === 'user' && turns[i + 1]?.role !== 'assistant' && failedTurns[AFTER + t.id]) {
      out.push({ id: AFTER + t.id, role: 'assistant', messages: [] });
    }
  });
  return out;
}

// storedFailure is what a stored thread says went wrong, for the page to
// show as it did live: a last reply that failed (its metadata carries the
// sentence the live stream ended with).
function storedFailure(messages) {
  const turn = groupTurns(messages).at(-1);
  const failed = turn?.role === 'assistant' ? turn.messages.find((m) => m.metadata?.finishReason === 'error') : undefined;
  if (!failed) return null;
  return { kind: 'error', text: errorText(failed.metadata.error || 'An error occurred.'), retry: 'regenerate' };
}

// lastAssistantTurn is the id of the thread's last assistant turn (see
// groupTurns), the one a run's end belongs to.
function lastAssistantTurn(messages) {
  const turns = groupTurns(messages);
  const t = turns.at(-1);
  return t?.role === 'assistant' ? t.id : null;
}

// AguiTurn is one turn; it renders again only when its messages or its
// place change. (The results and interrupts maps are new per render, so
// a finished turn is compared by its messages' identities.)
const AguiTurn = memo(
  function AguiTurn({ turn, isLast, streaming, running, results, progress, interrupts, answers, decisions, usage, failed, editing, versions, canRegenerate, actions }) {
    if (turn.role === 'user') {
      const text = userText(turn.messages[0].content);
      return (
        <UserTurn id={turn.id} text={text} editing={editing} busy={running} actions={actions} versions={versions}>
          <UserContent content={turn.messages[0].content} />
        </UserTurn>
      );
    }
    const text = turn.messages
      .filter((m) => m.role === 'assistant' && m.content)
      .map((m) => m.content)
      .join('\n\n');
    // A reloaded thread has no live RUN_FINISHED: its messages' metadata
    // (what the server stored) says the same.
    const shown = usage ?? storedUsage(turn);
    return (
      <Message
        role="assistant"
        id={turn.id}
        streaming={streaming}
        failed={failed || turn.messages.some((m) => m.metadata?.finishReason === 'error')}
        began={turn.messages.some((m) => m.role !== 'assistant' || m.content || m.toolCalls?.length)}
        actions={
          !streaming && (
            <>
              <Versions versions={versions} busy={running} onPick={actions.pickVersion} />
              {text && <CopyButton text={text} />}
              {isLast && (
                <button type="button" className="btn btn-small btn-quiet" data-testid="regenerate" disabled={running || !canRegenerate} onClick={actions.regenerate} title="Answer the last message again">
                  Regenerate
                </button>
              )}
            </>
          )
        }
        footer={!streaming && <Usage usage={shown?.usage} model={shown?.model} />}
      >
        {turn.messages.map((m) => (
          <AguiMessage
            key={m.id}
            message={m}
            results={results}
            progress={progress ?? EMPTY}
            interrupts={interrupts ?? EMPTY}
            answers={answers ?? {}}
            decisions={decisions}
            running={running}
            streaming={streaming && m === turn.messages.at(-1)}
            onAnswer={actions.answer}
          />
        ))}
      </Message>
    );
  },
  (a, b) =>
    a.isLast === b.isLast &&
    !a.isLast &&
    a.turn.messages.length === b.turn.messages.length &&
    a.turn.messages.every((m, i) => m === b.turn.messages[i]) &&
    a.usage === b.usage &&
    a.failed === b.failed &&
    a.editing === b.editing &&
    a.versions === b.versions &&
    a.running === b.running &&
    a.decisions === b.decisions,
);

const EMPTY = new Map();

// versionsOf is a turn's versions: a reply's are its first stored
// message's (a live reply may begin with reasoning, which a stored thread
// does not carry).
function versionsOf(turn, versions) {
  for (const m of turn.messages) {
    if (versions[m.id]) return versions[m.id];
  }
  return undefined;
}

// storedUsage sums the usage the server sent with a turn's messages (AG-UI
// 1.0 message metadata, one step each), or is undefined when it sent none.
function storedUsage(turn) {
  let usage;
  let model;
  for (const m of turn.messages) {
    const md = m.role === 'assistant' ? m.metadata : undefined;
    if (md?.model) model = md.model;
    if (!md?.usage) continue;
    usage ??= { inputTokens: 0, outputTokens: 0, reasoningTokens: 0 };
    for (const k of Object.keys(usage)) usage[k] += md.usage[k] ?? 0;
  }
  return usage && { usage, model };
}

// groupTurns shows a user message as one turn and everything the agent
// produced after it (assistant text, reasoning, tool calls and results) as
// one assistant turn, like the Vercel view.
function groupTurns(messages) {
  const turns = [];
  for (const m of messages) {
    if (m.role === 'system' || m.role === 'developer' || m.role === 'activity') continue;
    const role = m.role === 'user' ? 'user' : 'assistant';
    const last = turns.at(-1);
    if (role === 'assistant' && last?.role === 'assistant') last.messages.push(m);
    else turns.push({ id: m.id, role, messages: [m] });
  }
  return turns;
}

// withFiles is a user message's AG-UI 1.0 content: its text, then each
// uploaded file (a useChat file part from the composer) as a typed part
// whose URL the server maps to the file it keeps.
function withFiles(text, files) {
  const parts = text ? [{ type: 'text', text }] : [];
  for (const f of files) {
    const kind = f.mediaType.startsWith('image/') ? 'image' : 'document';
    parts.push({ type: kind, source: { type: 'url', value: new URL(f.url, location.href).href, mimeType: f.mediaType } });
  }
  return parts;
}

// UserContent shows a user message: its text, and its images and files.
function UserContent({ content }) {
  const media = Array.isArray(content) ? content.filter((p) => p.source?.type === 'url' || p.type === 'binary') : [];
  return (
    <>
      {media.map((p, i) => {
        const url = p.source?.value ?? p.url;
        const type = p.source?.mimeType ?? p.mimeType ?? '';
        return type.startsWith('image/') ? (
          <a key={i} className="attached-image" href={url} target="_blank" rel="noreferrer noopener" data-testid="attached-image">
            <img src={url} alt="an attached image" loading="lazy" />
          </a>
        ) : (
          <a key={i} className="source" href={url} target="_blank" rel="noreferrer noopener" data-testid="attached-file">
            {type || 'file'}
          </a>
        );
      })}
      <UserText text={userText(content)} />
    </>
  );
}

function userText(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.filter((p) => p.type === 'text').map((p) => p.text).join('');
  return '';
}

function parseArgs(raw) {
  if (!raw) return {};
  try {
    return JSON.parse(raw);
  } catch {
    return raw; // still streaming
  }
}

function parseContent(raw) {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

function AguiMessage({ message: m, results, progress, interrupts, answers, decisions, running, streaming, onAnswer }) {
  switch (m.role) {
    case 'user':
      return <UserContent content={m.content} />;
    case 'reasoning':
      return <Reasoning text={m.content} streaming={streaming} />;
    case 'tool':
      return null; // shown on its call
    case 'assistant':
      return (
        <>
          {m.content ? <Markdown text={m.content} /> : null}
          {(m.toolCalls ?? []).map((call) => {
            const result = results.get(call.id);
            const interrupt = interrupts.get(call.id);
            // A streaming tool's progress (an activity) shows until its result.
            const working = !result && running ? progress.get(call.id) : undefined;
            let state = 'input-available';
            // How the call's approval was answered: by this page, or as
            // the server stored it (a reloaded thread's tool message).
            const decision = decisions[call.id] ?? result?.metadata?.decision;
            // A denied call's result is the server's note that it did not run.
            if (decision?.expired) state = 'approval-expired';
            else if (result) state = result.error ? 'output-error' : decision?.approved === false ? 'output-denied' : 'output-available';
            else if (interrupt) state = answers[interrupt.id] ? 'approval-responded' : 'approval-requested';
            else if (running && typeof parseArgs(call.function.arguments) === 'string') state = 'input-streaming';
            return (
              <ToolCard
                key={call.id}
                id={call.id}
                name={call.function.name}
                state={state}
                input={parseArgs(call.function.arguments)}
                output={result && !result.error ? parseContent(result.content) : working}
                preliminary={working !== undefined}
                errorText={result?.error}
                approval={interrupt ? answers[interrupt.id] : decision}
                busy={running}
                onApprove={() => onAnswer(interrupt, true)}
                onDeny={(reason) => onAnswer(interrupt, false, reason)}
              />
            );
          })}
        </>
      );
    default:
      return null;
  }
}
