// Runs a script's flows in one process: importing the SDKs costs a Node
// process 0.2 to 0.5 CPU-seconds, more than most flows. Each flow has a
// state of its own (its responses, requests, cookie jar and warnings),
// which the code it runs reaches through flow() wherever it is called
// from: an AsyncLocalStorage follows the flow through its awaits, timers
// and streams.
//
// Each flow's outcome is one JSON line on stdout, {"flow", "ok", ...} or
// {"flow", "ok": false, "error"}; the process exits 1 when any failed.
import { AsyncLocalStorage } from 'node:async_hooks';

const store = new AsyncLocalStorage();

// flow is the running flow's state, or undefined outside a flow.
export const flow = () => store.getStore();

// runFlows runs the named flows, at most `parallel` at a time, each with
// run(name, state) in a state of its own, and exits.
export async function runFlows(names, run, { parallel = 4, fields = {} } = {}) {
  const queue = [...names];
  let failed = false;
  async function worker() {
    while (queue.length) {
      const name = queue.shift();
      const state = { name, checks: [], sent: [], warnings: [], jar: undefined };
      try {
        const summary = await store.run(state, () => run(name, state));
        console.log(JSON.stringify({ flow: name, ...fields, ok: true, ...summary }));
      } catch (e) {
        failed = true;
        console.log(JSON.stringify({ flow: name, ...fields, ok: false, error: String(e?.stack ?? e) }));
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(parallel, names.length) }, worker));
  process.exit(failed ? 1 : 0);
}
