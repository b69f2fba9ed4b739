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
// Code blocks are highlighted after the sanitizer, for the languages a
// fence names, and each shows its language and a Copy button. Math
// ($$…$$, \(…\), \[…\], and $…$ where it cannot be an amount of money:
// math-syntax.js) is typeset by KaTeX, also after the sanitizer.
//
// A long text (over SYNC_LIMIT) is parsed in a worker (markdown.worker.js):
// parsing is the costly part (a 50 kB reply took 200–500 ms of the main
// thread, in one piece). The page renders the tree the worker sends back;
// until the first one comes, the text shows as plain text. (A long text
// with math is rendered here: KaTeX's output becomes a tree through the
// DOM, which a worker has not.)
import { memo, useEffect, useMemo, useRef, useState } from 'react';
import ReactMarkdown from 'react-markdown';
import { CopyButton } from './ui.jsx';
import { hasMath, loadMath, PLAIN } from './markdown-pipeline.js';

// textOf is the text of a hast node (a code block's source).
function textOf(node) {
  if (!node) return '';
  if (node.type === 'text') return node.value;
  return (node.children ?? []).map(textOf).join('');
}

// CodeBlock is a fenced block with its language and a Copy button.
function CodeBlock({ node, children, ...rest }) {
  const code = node?.children?.find((c) => c.tagName === 'code');
  const lang = (code?.properties?.className ?? []).find((c) => String(c).startsWith('language-'))?.slice('language-'.length);
  return (
    <div className="code-block" data-testid="code-block">
      <div className="code-head">
        <span className="code-lang" data-testid="code-lang">
          {lang || 'text'}
        </span>
        <CopyButton text={() => textOf(code).replace(/\n$/, '')} testid="code-copy" label="Copy code" className="btn btn-small btn-quiet code-copy" />
      </div>
      <pre {...rest}>{children}</pre>
    </div>
  );
}

const COMPONENTS = {
  pre: CodeBlock,
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

// SYNC_LIMIT: a text up to this long is rendered at once on the main
// thread (a few milliseconds); a longer one goes through the worker.
const SYNC_LIMIT = 8192;

let worker = null;
let requests = 0;
const waiting = new Map();

// parseInWorker resolves to the tree of text, parsed in the worker.
function parseInWorker(text) {
  if (!worker) {
    worker = new Worker(new URL('./markdown.worker.js', import.meta.url), { type: 'module', name: 'markdown' });
    worker.onmessage = ({ data }) => {
      const w = waiting.get(data.id);
      waiting.delete(data.id);
      if (data.error) w?.reject(new Error(data.error));
      else w?.resolve(data.tree);
    };
    worker.onerror = () => {
      for (const w of waiting.values()) w.reject(new Error('the markdown worker failed'));
      waiting.clear();
      worker = null;
    };
  }
  const id = ++requests;
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    worker.postMessage({ id, text });
  });
}

// useParsed is the worker's tree for text (null until the first one
// comes, or when it fails). While one is being parsed, later texts wait,
// and only the latest is parsed next: a streaming reply shows at most one
// parse behind.
function useParsed(text, wanted) {
  const [parsed, setParsed] = useState(null);
  const s = useRef({ mounted: false, busy: false, latest: '' });
  useEffect(() => {
    s.current.mounted = true;
    return () => {
      s.current.mounted = false;
    };
  }, []);
  useEffect(() => {
    if (!wanted) return;
    const st = s.current;
    st.latest = text;
    if (st.busy) return;
    const parse = (t) => {
      st.busy = true;
      parseInWorker(t).then(
        (tree) => {
          st.busy = false;
          if (!st.mounted) return;
          setParsed({ text: t, tree });
          if (st.latest !== t) parse(st.latest);
        },
        () => {
          st.busy = false;
        },
      );
    };
    parse(text);
  }, [text, wanted]);
  return parsed;
}

// prepared is a rehype plugin that swaps in a tree parsed in the worker,
// so react-markdown does the rest as for any text: URLs checked again,
// components applied.
function prepared(tree) {
  return () => tree;
}

export const Markdown = memo(function Markdown({ text }) {
  // Math is typeset on the main thread (KaTeX's HTML is turned into a
  // tree through the DOM, which a worker has not).
  const plugins = usePlugins(text);
  const long = text.length > SYNC_LIMIT && !hasMath(text);
  const parsed = useParsed(text, long);
  const worked = useMemo(
    () =>
      parsed?.tree && (
        <ReactMarkdown rehypePlugins={[[prepared, parsed.tree]]} components={COMPONENTS}>
          {''}
        </ReactMarkdown>
      ),
    [parsed],
  );
  if (long) {
    return (
      <div className={worked ? 'text markdown' : 'text user-text'} data-testid="text">
        {worked || text}
      </div>
    );
  }
  return (
    <div className="text markdown" data-testid="text">
      <ReactMarkdown remarkPlugins={plugins.remark} rehypePlugins={plugins.rehype} components={COMPONENTS}>
        {text}
      </ReactMarkdown>
    </div>
  );
});

// usePlugins is the plugins for a text: with math once the math chunk
// and KaTeX's style sheet have loaded, when the text may hold math.
function usePlugins(text) {
  const wanted = hasMath(text);
  const [math, setMath] = useState(null);
  useEffect(() => {
    if (!wanted || math) return undefined;
    let live = true;
    Promise.all([loadMath(), import('katex/dist/katex.min.css')]).then(
      ([plugins]) => live && setMath(plugins),
      () => {}, // no math, then: the text shows as written
    );
    return () => {
      live = false;
    };
  }, [wanted, math]);
  return wanted && math ? math : PLAIN;
}
