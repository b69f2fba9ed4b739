// Markdown renders a model's text. Model output is untrusted (a prompt
// injection can make it say anything), so:
// - raw HTML in the text is never rendered (react-markdown builds React
//   elements and has no rehype-raw here), and rehype-sanitize (GitHub's
//   schema) checks the tree before anything else touches it;
// - links keep only http(s) and mailto URLs (react-markdown's default
//   urlTransform drops javascript: and the like), and open in a new tab
//   with no referrer;
// - images are not loaded: an image URL is a way to send the chat's
//   content to another server the moment it renders, so an image shows as
//   a link the user may follow.
// Code blocks are highlighted by lowlight (highlight.js over the syntax
// tree) after the sanitizer, for the languages a fence names.
import { memo } from 'react';
import ReactMarkdown from 'react-markdown';
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

const REMARK = [remarkGfm];
const REHYPE = [rehypeSanitize, highlight];

const COMPONENTS = {
  a: ({ node, href, children, ...rest }) =>
    href ? (
      <a {...rest} href={href} target="_blank" rel="noopener noreferrer nofollow">
        {children}
      </a>
    ) : (
      <span>{children}</span>
    ),
  img: ({ src, alt }) =>
    src ? (
      <a className="md-image" href={src} target="_blank" rel="noopener noreferrer nofollow">
        {'Image: ' + (alt || src)}
      </a>
    ) : null,
  // Wide tables scroll inside the message, not the page.
  table: ({ node, ...rest }) => (
    <div className="md-table">
      <table {...rest} />
    </div>
  ),
};

// PLAIN_WHILE_STREAMING: a streaming reply longer than this shows as plain
// text until it ends. Markdown is parsed whole on every render, so a very
// long reply would cost more the longer it gets; short ones (nearly all)
// render as markdown all along.
const PLAIN_WHILE_STREAMING = 16384;

export const Markdown = memo(function Markdown({ text, streaming }) {
  if (streaming && text.length > PLAIN_WHILE_STREAMING) {
    return (
      <div className="text user-text" data-testid="text">
        {text}
      </div>
    );
  }
  return (
    <div className="text markdown" data-testid="text">
      <ReactMarkdown remarkPlugins={REMARK} rehypePlugins={REHYPE} components={COMPONENTS}>
        {text}
      </ReactMarkdown>
    </div>
  );
});
