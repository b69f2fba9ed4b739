import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// AGENTUI set: the dev server proxies /api to the agentui binary there,
// as an app's own dev server does (the page then calls /api on its own
// origin). Unset: the page calls agentui cross-origin (?api=…).
const target = process.env.AGENTUI;
export default defineConfig({
  plugins: [react()],
  server: { proxy: target ? { '/api': { target } } : undefined },
});
