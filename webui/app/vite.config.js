// Builds the chat page into ../dist, which package webui embeds
// (//go:embed all:dist). `make web` runs this; `make web-check` fails
// when the committed build is stale, so the output must be deterministic:
// content-hashed asset names, no timestamps, no source maps.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  // Relative asset URLs: the page works under any prefix.
  base: './',
  // Vite 8 transforms JSX with Oxc: the automatic runtime (react/jsx-runtime)
  // needs no `import React` in every file.
  oxc: { jsx: { runtime: 'automatic' } },
  resolve: {
    // @ag-ui/client brings its own zod 3.25 (whose zod/v4 it imports);
    // the top-level zod 4 serves the same zod/v4 API, so bundle one copy.
    dedupe: ['zod'],
    alias: {
      // The page speaks AG-UI over SSE only: leave the protobuf codec out.
      '@ag-ui/proto': fileURLToPath(new URL('./src/ag-ui-proto-stub.js', import.meta.url)),
    },
  },
  build: {
    outDir: '../dist',
    emptyOutDir: true,
    sourcemap: false,
    // No polyfill: every browser this page targets supports modulepreload.
    modulePreload: { polyfill: false },
    // The main chunk is ~720 kB (~205 kB gzipped, as served): React, the AI
    // SDK, the markdown renderer and 14 highlight.js languages.
    chunkSizeWarningLimit: 800,
    rolldownOptions: {
      onwarn(warning, warn) {
        // swr (under @ai-sdk/react) starts with 'use client', which means
        // nothing outside React Server Components.
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return;
        warn(warning);
      },
    },
  },
});
