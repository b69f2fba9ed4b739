// The math plugins, a chunk of their own (markdown-pipeline.js loads them
// when a text may hold math): remark-math reads $$…$$ and
// math-syntax.js the other delimiters ($…$ where it cannot be money,
// \(…\), \[…\]); KaTeX typesets them after the sanitizer has checked
// the tree. KaTeX builds its output from the TeX source itself; with
// trust off (its default) \href, \url and the HTML commands render as
// plain text, and the size limits keep a hostile formula from growing
// without bound. Its style sheet is loaded with it (markdown.jsx).
import remarkMath from 'remark-math';
import rehypeKatex from 'rehype-katex';
import rehypeSanitize, { defaultSchema } from 'rehype-sanitize';
import { remarkChatMath } from './math-syntax.js';

export const remark = [[remarkMath, { singleDollarTextMath: false }], remarkChatMath];

// The sanitizer of the math pipeline also keeps the classes that say
// whether a formula is inline or displayed (GitHub's schema keeps only
// language-*), for KaTeX to read. They come from the markdown's math
// delimiters: raw HTML never reaches the tree.
export const sanitize = [
  rehypeSanitize,
  { ...defaultSchema, attributes: { ...defaultSchema.attributes, code: [['className', /^language-./, 'math-inline', 'math-display']] } },
];

export const katex = [rehypeKatex, { throwOnError: false, strict: 'ignore', trust: false, maxSize: 20, maxExpand: 200 }];
