// The markdown worker: a long text is parsed, sanitized and highlighted
// here, off the main thread, where it would otherwise block the page for
// hundreds of milliseconds (a 50 kB reply), and the page renders the tree
// it sends back (markdown.jsx). The pipeline is the page's own, as
// react-markdown builds it (raw HTML kept as nodes for the sanitizer to
// drop), so both paths show the same. (Texts with math are not sent here:
// see markdown.jsx.)
import { unified } from 'unified';
import remarkParse from 'remark-parse';
import remarkRehype from 'remark-rehype';
import { PLAIN } from './markdown-pipeline.js';

let cached = null;

function processor() {
  cached ??= unified().use(remarkParse).use(PLAIN.remark).use(remarkRehype, { allowDangerousHtml: true }).use(PLAIN.rehype);
  return cached;
}

// A request is {id, text}; the answer {id, tree} (a hast root, without
// positions), or {id, error}.
self.onmessage = ({ data: { id, text } }) => {
  try {
    const p = processor();
    const tree = p.runSync(p.parse(text));
    self.postMessage({ id, tree: strip(tree) });
  } catch (e) {
    self.postMessage({ id, error: String(e?.message ?? e) });
  }
};

// strip drops what the page does not use (positions, parse data), which
// would otherwise be most of what is copied back.
function strip(node) {
  delete node.position;
  delete node.data;
  if (node.children) for (const c of node.children) strip(c);
  return node;
}
