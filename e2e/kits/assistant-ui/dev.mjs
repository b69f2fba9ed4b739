// Starts this kit's page on Vite's dev server (the way an app's developer
// runs it), on PORT or a free port, and prints the line the browser
// test waits for. AGENTUI=<url> makes it proxy /api there.
import { createServer } from 'vite';

const server = await createServer({
  configFile: new URL('./vite.config.js', import.meta.url).pathname,
  root: new URL('.', import.meta.url).pathname,
  logLevel: 'warn',
  server: { host: '127.0.0.1', port: Number(process.env.PORT ?? 0), strictPort: !!process.env.PORT },
});
await server.listen();
const { port } = server.httpServer.address();
console.log(`${process.env.NAME ?? 'vite dev server'} listening on http://localhost:${port}`);
