// AgentuiAgent is HttpAgent with what an agentui server adds: connect()
// (AG-UI's reconnect, at <url>/connect) and stop() (<url>/<thread>/stop).
//
// connectAgent() on a reloaded page gets the stored thread and, when no
// run is going, its open interrupts (RUN_FINISHED with outcome
// interrupt), so they can be resumed; when a run is going, the thread as
// it was before the run and then the run from its start, live. Nothing
// runs the agent. stop() stops the thread's run on whichever server
// replica runs it.
//
// It takes the client package's exports, so the same file works with
// @ag-ui/client 1.x and 0.0.x:
//
//   import * as agui from '@ag-ui/client';
//   const AgentuiAgent = agentuiAgent(agui);
//   const agent = new AgentuiAgent({ url: '/api/agui', threadId });
//   await agent.connectAgent();
export function agentuiAgent({ HttpAgent, runHttpRequest, transformHttpEventStream }) {
  return class AgentuiAgent extends HttpAgent {
    // connectAgent gets a fresh abort controller, as runAgent does: the
    // last one may have been used to stop a run.
    connectAgent(...args) {
      this.abortController = new AbortController();
      return super.connectAgent(...args);
    }

    connect(input) {
      return transformHttpEventStream(
        runHttpRequest(() => this.fetch(`${this.url}/connect`, this.requestInit(input))),
        this.debugLogger,
      );
    }

    // stop asks the server to stop this thread's run; it resolves to
    // true when a run was stopped, false when none was going. The
    // answer's body is read to its end: a response dropped unread can be
    // collected before its body has come, and the browser then cancels
    // the request (net::ERR_ABORTED in DevTools).
    async stop() {
      const res = await this.fetch(`${this.url}/${encodeURIComponent(this.threadId)}/stop`, {
        method: 'POST',
        headers: { ...this.headers },
      });
      await res.arrayBuffer();
      return res.status === 202;
    }
  };
}
