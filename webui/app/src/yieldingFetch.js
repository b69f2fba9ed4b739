// yieldingFetch is fetch whose response body is handed on in pieces of at
// most PIECE bytes, with a macrotask before each. A reply that arrives
// faster than the page digests it (10,000 deltas in one burst) is parsed
// by the client libraries in microtasks, which never let the browser
// paint or handle a keystroke until the whole burst is through: the tab
// froze for seconds. Between pieces it now can. A slow stream is not
// delayed: a piece waits one macrotask (well under a millisecond).
const PIECE = 4096;

// yieldTask waits for a task of the ordinary kind, so timers and input
// get their turn too. (scheduler.yield() would resume ahead of them.)
function yieldTask() {
  return new Promise((resolve) => {
    const { port1, port2 } = new MessageChannel();
    port1.onmessage = () => resolve();
    port2.postMessage(null);
  });
}

export async function yieldingFetch(input, init) {
  const res = await fetch(input, init);
  if (!res.body) return res;
  const pieces = new TransformStream({
    async transform(chunk, controller) {
      for (let i = 0; i < chunk.length; i += PIECE) {
        await yieldTask();
        controller.enqueue(chunk.subarray(i, i + PIECE));
      }
    },
  });
  return new Response(res.body.pipeThrough(pieces), { status: res.status, statusText: res.statusText, headers: res.headers });
}
