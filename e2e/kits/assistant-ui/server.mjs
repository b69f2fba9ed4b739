// The assistant-ui page's server: its Vite build, and /api/* proxied to
// agentui (AGENTUI=<url>).
import { proxy, listen, serveStatic } from '../serve.mjs';

const files = serveStatic(new URL('./dist', import.meta.url).pathname);
const api = proxy(process.env.AGENTUI);
listen('assistant-ui page', (req, res) => (req.url.startsWith('/api/') ? api(req, res) : files(req, res)));
