// The math plugins, a chunk of their own (markdown-pipeline.js loads them
// when a text has a dollar sign): remark-math reads $…$ and $$…$$, and
// KaTeX typesets them after the sanitizer has checked the tree. KaTeX
// builds its output from the TeX source itself; with trust off (its
// default) \href, \url and the HTML commands render as plain text, and the
// size limits keep a hostile formula from growing without bound. Its
// style sheet is loaded with it (markdown.jsx).
import remarkMath from 'remark-math';
import rehypeKatex from 'rehype-katex';

export { remarkMath };
export const katex = [rehypeKatex, { throwOnError: false, strict: 'ignore', trust: false, maxSize: 20, maxExpand: 200 }];
