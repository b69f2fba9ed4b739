// The kits' page servers share this: static files from a Vite build, and
// requests proxied to agentui as they are (streamed both ways, cookies and
// headers untouched), as an app's own server would put both on one origin.
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml', '.wasm': 'application/wasm' };

// serveStatic answers GET for the files under dist ("/" is index.html).
export function serveStatic(dist) {
  return async (req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    const file = join(dist, normalize(path === '/' ? '/index.html' : path));
    if (!file.startsWith(dist + sep)) return void res.writeHead(404).end();
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404).end('not found');
    }
  };
}

// proxy forwards a request to upstream (agentui's base URL).
export function proxy(upstream) {
  const up = new URL(upstream);
  return (req, res) => {
    const out = http.request(
      { host: up.hostname, port: up.port, method: req.method, path: req.url, headers: { ...req.headers, host: up.host } },
      (answer) => {
        res.writeHead(answer.statusCode, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.writeHead(502).end());
    res.on('close', () => out.destroy()); // the browser went away: stop reading (agentui keeps the run)
    req.pipe(out);
  };
}

// listen starts handler on a loopback port (PORT, else a free one) and
// prints the line the test harness waits for.
export function listen(name, handler) {
  const server = http.createServer(handler);
  server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => console.log(`${name} listening on http://127.0.0.1:${server.address().port}`));
  return server;
}
