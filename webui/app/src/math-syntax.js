// Where a model's text holds math: a micromark extension (so code spans,
// escapes and emphasis work as in any markdown) and the handlers that turn
// its tokens into remark-math's nodes. It follows Pandoc's
// tex_math_dollars, with two more rules for prices:
//
//   $$…$$  displayed math (as in TeX), also inside a paragraph; a block
//          of its own ($$ on their own lines) is remark-math's;
//   \[…\]  displayed math;
//   \(…\)  inline math;
//   $…$    inline math only where it cannot be an amount of money or a
//          shell variable. Pandoc's rule: the opening $ has a non-space
//          character right after it, the closing $ a non-space character
//          right before it and no digit right after it. Further, a digit
//          never comes right after the opening $ ($5) nor right before it
//          (5$). The first $ after the opening one closes the formula or,
//          when it cannot, makes the opening $ text.
//
// So "I paid $5 for coffee and $10 for lunch", "$1,000.50 and $2" and
// "echo $HOME and $PATH" stay text, and "$x^2$" is a formula. A formula
// that starts with a digit is written \(2^{10}\) or $$2^{10}$$.
// Inside a formula a backslash keeps the character after it: \$ is a
// dollar sign, and \\ a TeX line break, not an escaped \ before a ) or
// ] that would end the formula.

const DOLLAR = 36;
const BACKSLASH = 92;
const LEFT_PAREN = 40;
const RIGHT_PAREN = 41;
const LEFT_BRACKET = 91;
const RIGHT_BRACKET = 93;

// micromark's character codes: null is the end, -5…-3 line endings, -2
// a tab, -1 a virtual space (part of a tab).
const isLineEnding = (code) => code !== null && code < -2;
const isSpace = (code) => code === -2 || code === -1 || code === 32;
const isDigit = (code) => code !== null && code >= 48 && code <= 57;

// Token types: one per kind of formula, its delimiters and its text.
const INLINE = 'chatMathInline';
const DISPLAY = 'chatMathDisplay';
const DELIMITER = 'chatMathDelimiter';
const DATA = 'chatMathData';

// dollar reads $…$ and $$…$$.
const dollar = { name: 'chatMathDollar', tokenize: tokenizeDollar, previous: mayOpen };

// mayOpen tells whether a $ after the character code may open a formula:
// not right after another $ (unless that one was escaped), and not right
// after a digit (a price written after its amount). (micromark asks a
// construct's previous only whether a character may start something;
// once one construct says yes, it tries them all, so the tokenizer asks
// again.)
function mayOpen(code) {
  if (isDigit(code)) return false;
  return code !== DOLLAR || this.events[this.events.length - 1]?.[1].type === 'characterEscape';
}

function tokenizeDollar(effects, ok, nok) {
  const self = this;
  let formula; // the token: INLINE for $…$, DISPLAY once a second $ opens $$…$$
  let inData = false;
  let afterSpace = false;
  let filled = false;
  return start;

  function start(code) {
    if (!mayOpen.call(self, self.previous)) return nok(code);
    formula = effects.enter(INLINE);
    effects.enter(DELIMITER);
    effects.consume(code);
    return second;
  }
  function second(code) {
    if (code !== DOLLAR) {
      effects.exit(DELIMITER);
      return openSingle(code);
    }
    formula.type = DISPLAY;
    effects.consume(code);
    effects.exit(DELIMITER);
    return openDouble;
  }
  // Right after an opening $: a space, a line end or a digit make it text.
  function openSingle(code) {
    if (code === null || code === DOLLAR || isDigit(code) || isSpace(code) || isLineEnding(code)) return nok(code);
    return inside(code);
  }
  // Right after an opening $$: a third $ makes the run text.
  function openDouble(code) {
    if (code === DOLLAR) return nok(code);
    return inside(code);
  }
  function inside(code) {
    if (code === null) return nok(code);
    if (isLineEnding(code)) {
      endData();
      effects.enter('lineEnding');
      effects.consume(code);
      effects.exit('lineEnding');
      afterSpace = true;
      return inside;
    }
    if (code === DOLLAR) {
      // A $ that cannot close $…$ (a space before it) ends the attempt.
      if (!filled || (formula.type === INLINE && afterSpace)) return nok(code);
      endData();
      effects.enter(DELIMITER);
      effects.consume(code);
      return formula.type === INLINE ? closed : closing;
    }
    if (!inData) {
      effects.enter(DATA);
      inData = true;
    }
    afterSpace = isSpace(code);
    filled ||= !afterSpace;
    effects.consume(code);
    return code === BACKSLASH ? escaped : inside;
  }
  function escaped(code) {
    if (code === null || isLineEnding(code)) return inside(code);
    afterSpace = false;
    effects.consume(code);
    return inside;
  }
  function endData() {
    if (inData) effects.exit(DATA);
    inData = false;
  }
  // The second $ of a closing $$ (a lone $ inside $$…$$ is not TeX).
  function closing(code) {
    if (code !== DOLLAR) return nok(code);
    effects.consume(code);
    return closed;
  }
  // Right after the closing $ or $$: another $ makes a run of them text,
  // and a digit after a closing $ makes it the start of a price.
  function closed(code) {
    if (code === DOLLAR || (formula.type === INLINE && isDigit(code))) return nok(code);
    effects.exit(DELIMITER);
    effects.exit(formula.type);
    return ok(code);
  }
}

// backslashed makes the construct for \<open>…\<close>, a formula of the
// given token type.
function backslashed(name, open, close, type) {
  const closing = {
    partial: true,
    tokenize(effects, ok, nok) {
      return (code) => {
        effects.enter(DELIMITER);
        effects.consume(code);
        return (next) => {
          if (next !== close) return nok(next);
          effects.consume(next);
          effects.exit(DELIMITER);
          return ok;
        };
      };
    },
  };
  return {
    name,
    tokenize(effects, ok, nok) {
      let filled = false;
      return start;

      function start(code) {
        effects.enter(type);
        effects.enter(DELIMITER);
        effects.consume(code);
        return opening;
      }
      function opening(code) {
        if (code !== open) return nok(code);
        effects.consume(code);
        effects.exit(DELIMITER);
        return between;
      }
      function between(code) {
        if (code === null) return nok(code);
        if (isLineEnding(code)) {
          effects.enter('lineEnding');
          effects.consume(code);
          effects.exit('lineEnding');
          return between;
        }
        if (code === BACKSLASH) return effects.attempt(closing, done, escape)(code);
        filled = true;
        effects.enter(DATA);
        return data(code);
      }
      // A backslash that does not close the formula keeps the character
      // after it: \\ is TeX's, and \\) is not the end.
      function escape(code) {
        filled = true;
        effects.enter(DATA);
        effects.consume(code);
        return escaped;
      }
      function escaped(code) {
        if (code === null || isLineEnding(code)) {
          effects.exit(DATA);
          return between(code);
        }
        effects.consume(code);
        return data;
      }
      function data(code) {
        if (code === null || isLineEnding(code) || code === BACKSLASH) {
          effects.exit(DATA);
          return between(code);
        }
        effects.consume(code);
        return data;
      }
      // An empty formula is text: \(\) shows as ().
      function done(code) {
        if (!filled) return nok(code);
        effects.exit(type);
        return ok(code);
      }
    },
  };
}

const syntax = {
  text: {
    [DOLLAR]: dollar,
    [BACKSLASH]: [backslashed('chatMathParen', LEFT_PAREN, RIGHT_PAREN, INLINE), backslashed('chatMathBracket', LEFT_BRACKET, RIGHT_BRACKET, DISPLAY)],
  },
};

// The formulas become remark-math's inlineMath nodes, which rehype-katex
// typesets: displayed when their class says math-display.
function enterFormula(display) {
  return function (token) {
    const className = ['language-math', display ? 'math-display' : 'math-inline'];
    this.enter({ type: 'inlineMath', value: '', data: { hName: 'code', hProperties: { className }, hChildren: [] } }, token);
    this.buffer();
  };
}

function exitFormula(token) {
  const value = this.resume();
  const node = this.stack[this.stack.length - 1];
  this.exit(token);
  node.value = value;
  node.data.hChildren.push({ type: 'text', value });
}

function exitData(token) {
  this.config.enter.data.call(this, token);
  this.config.exit.data.call(this, token);
}

const fromMarkdown = {
  enter: { [INLINE]: enterFormula(false), [DISPLAY]: enterFormula(true) },
  exit: { [INLINE]: exitFormula, [DISPLAY]: exitFormula, [DATA]: exitData },
};

// remarkChatMath is the remark plugin that reads these delimiters; it
// goes after remark-math (which reads $$ blocks), with remark-math's
// singleDollarTextMath off.
export function remarkChatMath() {
  const data = this.data();
  (data.micromarkExtensions ??= []).push(syntax);
  (data.fromMarkdownExtensions ??= []).push(fromMarkdown);
}
