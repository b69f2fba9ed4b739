// The markdown pipeline: the remark and rehype plugins a model's text goes
// through, the same on the main thread (react-markdown, for short texts)
// and in the markdown worker (markdown.worker.js, for long ones).
// The sanitizer comes first among the rehype plugins: what runs after it
// (highlighting, KaTeX) builds its output from text, not from the model's
// markup.
import remarkGfm from 'remark-gfm';
import rehypeSanitize from 'rehype-sanitize';
import { createLowlight } from 'lowlight';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

// The languages chat answers show most; a fence naming another shows
// plain. (All of highlight.js would triple the page's size.)
const LANGUAGES = { bash, c, css, diff, go, java, javascript, json, python, rust, sql, typescript, xml, yaml };
const ALIASES = { bash: ['sh', 'shell', 'zsh'], javascript: ['js', 'jsx'], typescript: ['ts', 'tsx'], xml: ['html'], python: ['py'], go: ['golang'] };

const lowlight = createLowlight(LANGUAGES);
lowlight.registerAlias(ALIASES);

// highlight is a rehype plugin: each <pre><code class="language-x"> of a
// registered language gets highlight.js's token spans as its children.
// (rehype-highlight does this too, but bundles 37 languages whatever it
// is given.)
function highlight() {
  const walk = (node, parent) => {
    if (node.type === 'element' && node.tagName === 'code' && parent?.tagName === 'pre') {
      const lang = (node.properties?.className ?? []).find((c) => String(c).startsWith('language-'))?.slice('language-'.length);
      if (lang && lowlight.registered(lang)) {
        const text = node.children.map((c) => (c.type === 'text' ? c.value : '')).join('');
        node.children = lowlight.highlight(lang, text).children;
        node.properties.className = [...node.properties.className, 'hljs'];
      }
      return;
    }
    for (const child of node.children ?? []) walk(child, node);
  };
  return (tree) => walk(tree, null);
}

export const PLAIN = { remark: [remarkGfm], rehype: [rehypeSanitize, highlight] };

// hasMath tells whether a text may hold math ($, \( or \[), so the math
// plugins (a chunk of their own) are worth loading.
export const hasMath = (text) => /\$|\\[([]/.test(text);

let withMath = null;

// loadMath resolves to the plugins with math (src/math.js): its own
// sanitizer, which keeps the class that says a formula is displayed, in
// the place of the plain one.
export function loadMath() {
  withMath ??= import('./math.js').then((m) => ({
    remark: [...PLAIN.remark, ...m.remark],
    rehype: [m.sanitize, m.katex, ...PLAIN.rehype.slice(1)],
  }));
  return withMath;
}
