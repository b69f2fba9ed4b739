// The AI SDK and the AG-UI client validate streams with zod. Left alone,
// zod probes `new Function("")` to decide whether it may compile parsers;
// under this page's Content-Security-Policy (no 'unsafe-eval') the probe
// fails quietly but Chromium still reports a CSP violation on the console.
// jitless skips the probe: zod interprets its schemas instead.
// Imported first by main.jsx, before any schema runs.
import { config } from 'zod/v4/core';

config({ jitless: true });
