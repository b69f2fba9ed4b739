// Which text the page reads as math: make web-test (node --test) parses
// each case with the page's own remark plugins (markdown-pipeline.js and
// math.js) and compares what the paragraph became.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { unified } from 'unified';
import remarkParse from 'remark-parse';
import { PLAIN } from './markdown-pipeline.js';
import { remark } from './math.js';

const parser = unified().use(remarkParse).use([...PLAIN.remark, ...remark]);

// parts is a paragraph's content: text as a string, a formula as
// {inline} or {display}, other nodes by type.
function parts(text) {
  const [first, ...rest] = parser.runSync(parser.parse(text)).children;
  assert.equal(rest.length, 0, 'one block');
  const part = (n) => {
    if (n.type === 'text') return n.value;
    if (n.type === 'inlineMath') return n.data.hProperties.className.includes('math-display') ? { display: n.value } : { inline: n.value };
    if (n.type === 'math') return { block: n.value };
    return { [n.type]: (n.children ?? []).map(part) };
  };
  return first.type === 'paragraph' ? first.children.map(part) : [part(first)];
}

const cases = [
  // Money and shell variables stay text, dollar signs and spaces kept.
  ['I paid $5 for coffee and $10 for lunch', ['I paid $5 for coffee and $10 for lunch']],
  ['$1,000.50 and $2', ['$1,000.50 and $2']],
  ['echo $HOME and $PATH', ['echo $HOME and $PATH']],
  ['from $5-$10 a month', ['from $5-$10 a month']],
  ['5$, or 10$ with tax', ['5$, or 10$ with tax']],
  ['between $ and $', ['between $ and $']],
  ['an escaped \\$5 and $x$', ['an escaped $5 and ', { inline: 'x' }]],
  ['$5 and $x$', ['$5 and ', { inline: 'x' }]],
  // $…$ where it can only be math.
  ['$x^2$', [{ inline: 'x^2' }]],
  ['Einstein wrote $E=mc^2$, and', ['Einstein wrote ', { inline: 'E=mc^2' }, ', and']],
  ['$a*b$ and $c*d$', [{ inline: 'a*b' }, ' and ', { inline: 'c*d' }]],
  ['**$x$**', [{ strong: [{ inline: 'x' }] }]],
  ['$x = \\$5$', [{ inline: 'x = \\$5' }]],
  ['$a\nb$', [{ inline: 'a\nb' }]],
  // Not math: a space inside the dollars, a digit after the closing one,
  // a run of dollars, code.
  ['$x $ and $ y$', ['$x $ and $ y$']],
  ['$x$5', ['$x$5']],
  ['a $x$$', ['a $x$$']],
  ['`$x$` is code', [{ inlineCode: [] }, ' is code']],
  // $$…$$, \(…\) and \[…\] are always math.
  ['$$\\int_0^1 x\\,dx$$', [{ display: '\\int_0^1 x\\,dx' }]],
  ['so $$5 + 5$$ and $$ y $$', ['so ', { display: '5 + 5' }, ' and ', { display: ' y ' }]],
  ['a $$x =\n1$$ b', ['a ', { display: 'x =\n1' }, ' b']],
  ['$$\n\\int_0^1 x^2\\,dx\n$$', [{ block: '\\int_0^1 x^2\\,dx' }]],
  ['$$$ and $$$$', ['$$$ and $$$$']],
  ['$$a$b$$', [{ inline: 'a$b' }]],
  ['so \\(a+b\\) holds', ['so ', { inline: 'a+b' }, ' holds']],
  ['\\(2^{10}\\)', [{ inline: '2^{10}' }]],
  ['\\(a \\\\ b\\)', [{ inline: 'a \\\\ b' }]],
  ['see \\[E = mc^2\\] here', ['see ', { display: 'E = mc^2' }, ' here']],
  ['\\[\nx = 1\n\\]', [{ display: '\nx = 1\n' }]],
  // Escaped or unfinished, they are text.
  ['\\\\(x\\\\)', ['\\(x\\)']],
  ['\\(unclosed', ['(unclosed']],
  ['\\(\\)', ['()']],
];

for (const [text, want] of cases) {
  test(JSON.stringify(text), () => {
    assert.deepEqual(parts(text), want);
  });
}
