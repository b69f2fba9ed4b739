// The CopilotKit page's server, one Node process as CopilotKit's docs set
// it up: the Vite build, the CopilotKit runtime at /api/copilotkit whose
// "default" agent is an AG-UI HttpAgent on agentui (AGENTUI=<url>), and
// POST /api/token proxied to agentui (the page's history credential).
//
// The runtime forwards the browser's Authorization header to agentui, not
// its cookies. Its stock runner restores a thread (connect) from its own
// memory only, which a restart of this process loses; AgentuiRunner asks
// agentui instead (POST /api/agui/connect) when the request has a
// credential, so the thread and its open approvals come back from the
// server that keeps them.
import { randomUUID } from 'node:crypto';
import { HttpAgent } from '@ag-ui/client';
import { CopilotRuntime, InMemoryAgentRunner } from '@copilotkit/runtime/v2';
import { createCopilotNodeListener } from '@copilotkit/runtime/v2/node';
import { listen, proxy, serveStatic } from '../serve.mjs';

const agentui = process.env.AGENTUI;

class AgentuiRunner extends InMemoryAgentRunner {
  connect(request) {
    if (!request.headers?.authorization) return super.connect(request);
    const connect = new HttpAgent({ url: `${agentui}/api/agui/connect`, headers: request.headers });
    return connect.run({ threadId: request.threadId, runId: randomUUID(), messages: [], tools: [], context: [], state: {}, forwardedProps: {} });
  }
}

const runtime = new CopilotRuntime({
  agents: { default: new HttpAgent({ url: `${agentui}/api/agui` }) },
  runner: new AgentuiRunner(),
});
const copilot = createCopilotNodeListener({ runtime, basePath: '/api/copilotkit', activateChannels: false });
const files = serveStatic(new URL('./dist', import.meta.url).pathname);
const token = proxy(agentui);

listen('CopilotKit page', (req, res) => {
  if (req.url.startsWith('/api/copilotkit')) return copilot(req, res);
  if (req.url === '/api/token') return token(req, res);
  return files(req, res);
});
