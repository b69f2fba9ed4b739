// Builds the chat page into ../dist, which package webui embeds
// (//go:embed all:dist). `make web` runs this; `make web-check` fails
// when the committed build is stale, so the output must be deterministic:
// content-hashed asset names, no timestamps, no source maps.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// woff2Only drops the WOFF and TrueType fallbacks from KaTeX's font
// faces before Vite collects their files: every browser the page targets
// reads WOFF2, and the fallbacks would add about 900 kB to the binary.
const woff2Only = {
  name: 'agentui-katex-woff2-only',
  enforce: 'pre',
  transform(code, id) {
    if (!/katex(\.min)?\.css$/.test(id)) return null;
    return code.replace(/,\s*url\([^)]*\.(?:woff|ttf)\)\s*format\("(?:woff|truetype)"\)/g, '');
  },
};

export default defineConfig({
  plugins: [woff2Only],
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
  // The markdown worker has no DOM: micromark's entity decoder is taken
  // in its build for workers (its package's "worker" export), not the
  // browser's, which asks the DOM.
  worker: {
    format: 'es',
    plugins: () => [
      {
        name: 'agentui-worker-entities',
        enforce: 'pre',
        resolveId(source) {
          if (source === 'decode-named-character-reference') {
            return fileURLToPath(new URL('./node_modules/decode-named-character-reference/index.js', import.meta.url));
          }
          return null;
        },
      },
    ],
  },
  build: {
    outDir: '../dist',
    emptyOutDir: true,
    sourcemap: false,
    // No polyfill: every browser this page targets supports modulepreload.
    modulePreload: { polyfill: false },
    // Fonts are files, never data: URLs, which the server's
    // Content-Security-Policy (font-src from default-src 'self') refuses.
    assetsInlineLimit: (file) => (file.endsWith('.woff2') ? false : undefined),
    // The main chunk is ~720 kB (~205 kB gzipped, as served): React, the AI
    // SDK, the markdown renderer and 14 highlight.js languages.
    chunkSizeWarningLimit: 800,
    rolldownOptions: {
      onwarn(warning, warn) {
        // swr (under @ai-sdk/react) starts with 'use client', which means
        // nothing outside React Server Components.
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return;
        // How long plugins took: noise on a busy machine, not a problem.
        if (warning.code === 'PLUGIN_TIMINGS') return;
        warn(warning);
      },
    },
  },
});
