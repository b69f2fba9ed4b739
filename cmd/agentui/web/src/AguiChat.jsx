// The chat over AG-UI 1.0: HttpAgent from @ag-ui/client (with agentui's
// connect and stop, agentuiAgent.js) against POST /api/agui, with the
// chat id as the thread id. A reload connects: the thread comes back with
// its open approvals, and a reply still being produced goes on showing.
// The page answers the get_location frontend tool and the server's
// approval interrupts.
import { useEffect, useRef, useState } from 'react';
import * as agui from '@ag-ui/client';
import { agentuiAgent } from './agentuiAgent.js';
import { generateId } from './ids.js';
import { Composer, ErrorBox, Message, MessageList, Pending, Reasoning, Text, ToolCard } from './ui.jsx';
import { getLocation, LOCATION_TOOL, locationToolDeclaration } from './location.js';

const TOOLS = [locationToolDeclaration];
// A run that only hands back frontend tool results goes round again; this
// bounds a model that keeps calling tools.
const MAX_ROUNDS = 8;
const AgentuiAgent = agentuiAgent(agui);

export function AguiChat({ chatId, fresh }) {
  const [agent] = useState(() => new AgentuiAgent({ url: '/api/agui', threadId: chatId }));
  const [messages, setMessages] = useState([]);
  const [running, setRunning] = useState(false);
  const [error, setError] = useState(null);
  const [interrupts, setInterrupts] = useState([]);
  const [answers, setAnswers] = useState({}); // interrupt id → payload, until the resume is sent
  const [decisions, setDecisions] = useState({}); // tool call id → approved, for the chat's life
  const stopping = useRef(false);

  useEffect(() => {
    const sub = agent.subscribe({
      onMessagesChanged: () => setMessages([...agent.messages]),
      onRunErrorEvent: ({ event }) => {
        setError(event.message || 'The run failed.');
      },
    });
    return () => {
      sub.unsubscribe();
      if (agent.isRunning) agent.abortRun();
    };
  }, [agent]);

  // A thread the page did not just make may have a past, open approvals
  // and a reply being produced: connect shows them, running nothing.
  useEffect(() => {
    if (fresh) return;
    setRunning(true);
    stopping.current = false;
    agent
      .connectAgent()
      .catch((e) => {
        if (!stopping.current) setError(e?.message ?? String(e));
      })
      .finally(() => {
        setRunning(false);
        setMessages([...agent.messages]);
        setInterrupts([...(agent.pendingInterrupts ?? [])]);
      });
  }, [agent, fresh]);

  const run = async (params = {}) => {
    setRunning(true);
    setError(null);
    setInterrupts([]);
    setAnswers({});
    stopping.current = false;
    try {
      let next = params;
      for (let round = 0; round < MAX_ROUNDS; round++) {
        let pending = [];
        let failed = false;
        await agent.runAgent(
          { tools: TOOLS, ...next },
          {
            onRunFinishedEvent: (p) => {
              if (p.outcome === 'success') pending = p.pendingToolCallIds ?? [];
            },
            onRunErrorEvent: () => {
              failed = true;
            },
          },
        );
        if (failed || stopping.current) break;
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
      if (!stopping.current) setError((prev) => prev ?? e?.message ?? String(e));
    } finally {
      setRunning(false);
      setMessages([...agent.messages]);
      setInterrupts([...(agent.pendingInterrupts ?? [])]);
    }
  };

  const send = (text) => {
    if (interrupts.length > 0) {
      setError('Approve or deny the pending tool call first.');
      return;
    }
    agent.addMessage({ id: generateId(), role: 'user', content: text });
    setMessages([...agent.messages]);
    run();
  };

  // Stop asks the server to stop the run (it outlives this request),
  // then stops reading.
  const stop = () => {
    stopping.current = true;
    agent.stop().catch(() => {});
    agent.abortRun();
  };

  // Regenerate: keep the thread up to the last user message and run again;
  // the server truncates its copy there too.
  const regenerate = () => {
    const i = agent.messages.findLastIndex((m) => m.role === 'user');
    if (i < 0) return;
    agent.setMessages(agent.messages.slice(0, i + 1));
    setMessages([...agent.messages]);
    run();
  };

  // Every open interrupt must be answered in one resume.
  const answer = (interrupt, approved) => {
    const next = { ...answers, [interrupt.id]: { approved } };
    setAnswers(next);
    if (interrupt.toolCallId) setDecisions((d) => ({ ...d, [interrupt.toolCallId]: approved }));
    if (interrupts.every((it) => next[it.id])) {
      run({ resume: interrupts.map((it) => ({ interruptId: it.id, status: 'resolved', payload: next[it.id] })) });
    }
  };

  const turns = groupTurns(messages);
  const results = new Map(messages.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m]));
  const byCall = new Map(interrupts.filter((it) => it.toolCallId).map((it) => [it.toolCallId, it]));
  const contentKey = messages.length + ':' + JSON.stringify(messages.at(-1) ?? null).length + ':' + running;
  return (
    <>
      <MessageList
        empty={messages.length === 0}
        contentKey={contentKey}
      >
        {turns.map((turn, i) => (
          <Message key={turn.id} role={turn.role} id={turn.id} streaming={running && i === turns.length - 1 && turn.role === 'assistant'}>
            {turn.messages.map((m) => (
              <AguiMessage
                key={m.id}
                message={m}
                results={results}
                interrupts={byCall}
                answers={answers}
                decisions={decisions}
                running={running}
                streaming={running && m === messages.at(-1)}
                onAnswer={answer}
              />
            ))}
          </Message>
        ))}
        {running && turns.at(-1)?.role !== 'assistant' && (
          <Pending />
        )}
      </MessageList>
      <ErrorBox message={error} onDismiss={() => setError(null)} />
      <Composer
        status={running ? 'streaming' : interrupts.length ? 'awaiting-approval' : 'ready'}
        busy={running}
        onSend={send}
        onStop={stop}
        onRegenerate={regenerate}
        canRegenerate={messages.some((m) => m.role === 'user') && interrupts.length === 0}
      />
    </>
  );
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

function AguiMessage({ message: m, results, interrupts, answers, decisions, running, streaming, onAnswer }) {
  switch (m.role) {
    case 'user':
      return <Text text={userText(m.content)} />;
    case 'reasoning':
      return <Reasoning text={m.content} streaming={streaming} />;
    case 'tool':
      return null; // shown on its call
    case 'assistant':
      return (
        <>
          {m.content ? <Text text={m.content} /> : null}
          {(m.toolCalls ?? []).map((call) => {
            const result = results.get(call.id);
            const interrupt = interrupts.get(call.id);
            let state = 'input-available';
            // A denied call's result is the server's note that it did not run.
            if (result) state = result.error ? 'output-error' : decisions[call.id] === false ? 'output-denied' : 'output-available';
            else if (interrupt) state = answers[interrupt.id] ? 'approval-responded' : 'approval-requested';
            else if (running && typeof parseArgs(call.function.arguments) === 'string') state = 'input-streaming';
            return (
              <ToolCard
                key={call.id}
                id={call.id}
                name={call.function.name}
                state={state}
                input={parseArgs(call.function.arguments)}
                output={result && !result.error ? parseContent(result.content) : undefined}
                errorText={result?.error}
                approval={interrupt ? answers[interrupt.id] : undefined}
                busy={running}
                onApprove={() => onAnswer(interrupt, true)}
                onDeny={() => onAnswer(interrupt, false)}
              />
            );
          })}
        </>
      );
    default:
      return null;
  }
}
