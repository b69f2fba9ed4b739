import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// AGENTUI set: the dev server (dev.mjs) proxies /api to the agentui binary
// there, as an app's own dev server does.
const target = process.env.AGENTUI;
export default defineConfig({
  plugins: [react()],
  build: { chunkSizeWarningLimit: 10000 },
  server: { proxy: target ? { '/api': { target } } : undefined },
});
