/**
 * Translates the external tool's expressions into our JSONata. A parameter string starting
 * with `=` is a template: literal text with `{{ js }}` holes. Only a small, exact subset of
 * JavaScript is translated (field paths of the current item and of named nodes, literals,
 * comparisons, arithmetic on numbers, string concatenation with a string literal, `!`, `? :`,
 * `&&`/`||` where a boolean is wanted, a few methods). Anything else is `Untranslatable`: where
 * the scope can evaluate JavaScript (`ExpressionScope.js`, services/extflow/jsExpressions.ts)
 * the expression runs as JavaScript in the code sandbox; otherwise the node is listed instead
 * of running with a guessed meaning.
 */
import type { JsMode } from './jsExpressions';
import { Unsupported } from './types';

export interface ExpressionScope {
  /** Our node id of a node named in the export (its output), or undefined when there is none. */
  idOf(name: string): string | undefined;
  /** Called once per translated expression (for the report). */
  counted?(): void;
  /** A translation that is exact for the usual data but differs in a corner (reported as a warning). */
  note?(message: string): void;
  /**
   * Evaluates a whole `=…{{ js }}…` template as JavaScript when it has no exact translation,
   * answering the JSONata that reads its value in the run. Absent: the expression is unsupported.
   */
  js?(template: string, mode: JsMode): string;
}

/** An expression outside the exactly translatable subset (not an error of the expression itself). */
export class Untranslatable extends Unsupported {}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A JSONata field step: plain when it is an identifier, else in backticks. */
export function fieldStep(name: string): string {
  if (IDENT.test(name) && !['and', 'or', 'in', 'true', 'false', 'null', 'function'].includes(name)) return name;
  if (name.includes('`')) throw new Unsupported(`field name ${JSON.stringify(name)} contains a backtick`, 'Rename the field.');
  return `\`${name}\``;
}

export const nodeRef = (id: string) => `$nodes.${fieldStep(id)}`;

export const jsonLiteral = (value: unknown) => JSON.stringify(value);

// ---------------------------------------------------------------------------------------------
// Tokenizer

type Tok = { t: 'num'; v: number } | { t: 'str'; v: string } | { t: 'id'; v: string } | { t: 'op'; v: string };

const OPS = [
  '===',
  '!==',
  '==',
  '!=',
  '<=',
  '>=',
  '&&',
  '||',
  '?.',
  '<',
  '>',
  '+',
  '-',
  '*',
  '/',
  '%',
  '!',
  '?',
  ':',
  '.',
  ',',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
];

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src.charAt(i);
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(src[i + 1] ?? ''))) {
      const m = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/.exec(src.slice(i))!;
      out.push({ t: 'num', v: Number(m[0]) });
      i += m[0].length;
      continue;
    }
    if (/[A-Za-z_$]/.test(c)) {
      const m = /^[A-Za-z_$][A-Za-z0-9_$]*/.exec(src.slice(i))!;
      out.push({ t: 'id', v: m[0] });
      i += m[0].length;
      continue;
    }
    if (c === '"' || c === "'" || c === '`') {
      let j = i + 1;
      let v = '';
      while (j < src.length && src[j] !== c) {
        if (src[j] === '\\') {
          const n = src[j + 1];
          const map: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', '`': '`' };
          if (n === undefined || !(n in map)) throw untranslatable(src, 'an escape sequence');
          v += map[n];
          j += 2;
          continue;
        }
        if (c === '`' && src[j] === '$' && src[j + 1] === '{') throw untranslatable(src, 'a template literal with ${…}');
        v += src[j];
        j++;
      }
      if (j >= src.length) throw untranslatable(src, 'an unterminated string');
      out.push({ t: 'str', v });
      i = j + 1;
      continue;
    }
    const op = OPS.find((o) => src.startsWith(o, i));
    if (!op) throw untranslatable(src, `the character "${c}"`);
    out.push({ t: 'op', v: op });
    i += op.length;
  }
  return out;
}

function untranslatable(src: string, what: string): Unsupported {
  return new Untranslatable(
    `expression {{ ${src.trim()} }} uses ${what}, which has no exact JSONata translation`,
    'Rewrite the expression in JSONata on the imported node (see README "The workflow graph"), or move the logic into a code node.',
  );
}

// ---------------------------------------------------------------------------------------------
// Parser: a JavaScript expression subset straight to JSONata text. `Val` carries what is known
// of the value's kind, which decides `+` (concatenation or addition).

type Kind = 'string' | 'number' | 'boolean' | 'unknown' | 'null';
interface Val {
  code: string;
  kind: Kind;
  /** Set while a path to item data is being built (`$json.a.b`, `$('X').item.json`). */
  path?: boolean;
  /** Special objects that are only meaningful with a following member: `$input`, `$node["X"]`, `$('X')`. */
  special?:
    | { kind: 'input' }
    | { kind: 'node'; id: string; name: string }
    | { kind: 'nodeItem'; id: string }
    | { kind: 'math' }
    | { kind: 'inputItem' };
}

class Parser {
  private pos = 0;
  constructor(
    private readonly toks: Tok[],
    private readonly src: string,
    private readonly scope: ExpressionScope,
  ) {}

  parse(): Val {
    const v = this.ternary(false);
    const extra = this.toks[this.pos];
    if (extra) throw this.fail(`"${tokText(extra)}" here`);
    return this.finish(v);
  }

  parseBoolean(): Val {
    const v = this.ternary(true);
    const extra = this.toks[this.pos];
    if (extra) throw this.fail(`"${tokText(extra)}" here`);
    return this.finish(v);
  }

  private fail(what: string) {
    return untranslatable(this.src, what);
  }

  private peek(v?: string): boolean {
    const t = this.toks[this.pos];
    return !!t && t.t === 'op' && (v === undefined || t.v === v);
  }

  private eat(v: string): boolean {
    if (this.peek(v)) {
      this.pos++;
      return true;
    }
    return false;
  }

  private expect(v: string) {
    if (!this.eat(v)) throw this.fail(`a missing "${v}"`);
  }

  private finish(v: Val): Val {
    if (v.special) {
      if (v.special.kind === 'input') return { code: '$input', kind: 'unknown' };
      throw this.fail('a node reference without .json');
    }
    return v;
  }

  private ternary(bool: boolean): Val {
    const test = this.or(bool);
    if (!this.eat('?')) return test;
    const a = this.finish(this.ternary(bool));
    this.expect(':');
    const b = this.finish(this.ternary(bool));
    this.scope.note?.('a ? b : c tests its condition with JSONata truthiness (an empty array or object counts as false)');
    return { code: `(${this.finish(test).code} ? ${a.code} : ${b.code})`, kind: a.kind === b.kind ? a.kind : 'unknown' };
  }

  private or(bool: boolean): Val {
    return this.leftAssociative(
      ['||'],
      () => this.and(bool),
      (_, left, right) => this.logical(bool, '||', 'or', left, right),
    );
  }

  private and(bool: boolean): Val {
    return this.leftAssociative(
      ['&&'],
      () => this.equality(bool),
      (_, left, right) => this.logical(bool, '&&', 'and', left, right),
    );
  }

  /** `||` and `&&` become JSONata's `or` and `and`, which answer a boolean where JavaScript answers an operand. */
  private logical(bool: boolean, js: '||' | '&&', jsonata: 'or' | 'and', left: Val, right: Val): Val {
    if (!bool && (left.kind !== 'boolean' || right.kind !== 'boolean'))
      throw this.fail(`${js} between values that are not both booleans (JavaScript returns an operand there)`);
    return { code: `(${this.finish(left).code} ${jsonata} ${this.finish(right).code})`, kind: 'boolean' };
  }

  private equality(bool: boolean): Val {
    return this.leftAssociative(
      ['===', '!==', '==', '!='],
      () => this.relational(bool),
      (op, left, right) => {
        if (op === '==' || op === '!=') this.scope.note?.(`${op} is translated as a strict comparison (no type coercion)`);
        return { code: `(${this.finish(left).code} ${op.startsWith('!') ? '!=' : '='} ${this.finish(right).code})`, kind: 'boolean' };
      },
    );
  }

  private relational(bool: boolean): Val {
    return this.leftAssociative(['<=', '>=', '<', '>'], () => this.additive(bool), this.asIs('boolean'));
  }

  private additive(bool: boolean): Val {
    return this.leftAssociative(
      ['+', '-'],
      () => this.multiplicative(bool),
      (op, left, right) => this.plusOrMinus(op, left, right),
    );
  }

  private plusOrMinus(op: string, left: Val, rawRight: Val): Val {
    const right = this.finish(rawRight);
    const l = this.finish(left);
    if (op === '+') {
      if (l.kind === 'string' || right.kind === 'string') {
        if (
          (l.kind !== 'string' && l.kind !== 'number' && l.kind !== 'unknown') ||
          (right.kind !== 'string' && right.kind !== 'number' && right.kind !== 'unknown')
        ) {
          throw this.fail('+ between a string and a non-string');
        }
        if (l.kind === 'unknown' || right.kind === 'unknown')
          this.scope.note?.('+ with a string literal is translated as string concatenation (&)');
        return { code: `(${l.code} & ${right.code})`, kind: 'string' };
      } else if (l.kind === 'number' && right.kind === 'number') {
        return { code: `(${l.code} + ${right.code})`, kind: 'number' };
      } else if ((l.kind === 'unknown' || l.kind === 'number') && (right.kind === 'unknown' || right.kind === 'number')) {
        // Decided when it runs, as JavaScript does: a string operand concatenates, numbers add (other types fail the node).
        this.scope.note?.('+ adds numbers and concatenates when an operand is a string, decided when the node runs');
        return {
          code: `(($type(${l.code}) = "string" or $type(${right.code}) = "string") ? $string(${l.code}) & $string(${right.code}) : ${l.code} + ${right.code})`,
          kind: 'unknown',
        };
      } else {
        throw this.fail('+ between a boolean or null and another value');
      }
    } else {
      return { code: `(${l.code} - ${right.code})`, kind: 'number' };
    }
  }

  private multiplicative(bool: boolean): Val {
    return this.leftAssociative(['*', '/', '%'], () => this.unary(bool), this.asIs('number'));
  }

  /** An operator JSONata writes as JavaScript does, making a value of `kind`. */
  private asIs(kind: Val['kind']): (op: string, left: Val, right: Val) => Val {
    return (op, left, right) => ({ code: `(${this.finish(left).code} ${op} ${this.finish(right).code})`, kind });
  }

  /** Operands joined by the binary operators `ops`, left to right; `combine` translates each operator with its two sides. */
  private leftAssociative(ops: string[], operand: () => Val, combine: (op: string, left: Val, right: Val) => Val): Val {
    let left = operand();
    for (;;) {
      const op = ops.find((o) => this.peek(o));
      if (!op) return left;
      this.pos++;
      left = combine(op, left, operand());
    }
  }

  private unary(bool: boolean): Val {
    if (this.eat('!')) {
      const v = this.finish(this.unary(true));
      return { code: `$not(${v.code})`, kind: 'boolean' };
    }
    if (this.eat('-')) {
      const v = this.finish(this.unary(bool));
      return { code: `-${v.code}`, kind: 'number' };
    }
    return this.postfix(bool);
  }

  private postfix(bool: boolean): Val {
    let v = this.primary(bool);
    for (;;) {
      if (this.peek('?.')) throw this.fail('optional chaining (?.)');
      if (this.eat('.')) {
        const t = this.toks[this.pos++];
        if (!t || t.t !== 'id') throw this.fail('a member access without a name');
        v = this.member(v, t.v);
      } else if (this.eat('[')) {
        const t = this.toks[this.pos++];
        this.expect(']');
        if (t?.t === 'str') v = this.member(v, t.v);
        else if (t?.t === 'num' && Number.isInteger(t.v) && t.v >= 0) v = this.index(v, t.v);
        else throw this.fail('a computed member access');
      } else if (this.peek('(')) {
        throw this.fail('a call of a computed value');
      } else return v;
    }
  }

  private args(): Val[] {
    this.expect('(');
    const out: Val[] = [];
    if (this.eat(')')) return out;
    do out.push(this.finish(this.ternary(false)));
    while (this.eat(','));
    this.expect(')');
    return out;
  }

  private member(v: Val, name: string): Val {
    const s = v.special;
    if (s?.kind === 'input') {
      if (name === 'item') return { code: '', kind: 'unknown', special: { kind: 'inputItem' } };
      if (name === 'first' || name === 'last') {
        if (this.args().length) throw this.fail(`$input.${name}() with arguments`);
        this.scope.note?.(`$input.${name}() is the node's input (one item per connection)`);
        return { code: '', kind: 'unknown', special: { kind: 'inputItem' } };
      }
      throw this.fail(`$input.${name}`);
    }
    if (s?.kind === 'inputItem') {
      if (name === 'json') return { code: '$input', kind: 'unknown', path: true };
      throw this.fail(`.${name} of an item (only .json has a translation)`);
    }
    if (s?.kind === 'node') {
      if (name === 'json') return { code: nodeRef(s.id), kind: 'unknown', path: true };
      if (name === 'item') return { code: '', kind: 'unknown', special: { kind: 'nodeItem', id: s.id } };
      if (name === 'first' || name === 'last') {
        if (this.args().length) throw this.fail(`.${name}() with arguments`);
        this.scope.note?.(`$('${s.name}').${name}() is that node's output (one item per connection)`);
        return { code: '', kind: 'unknown', special: { kind: 'nodeItem', id: s.id } };
      }
      throw this.fail(`.${name} of a node reference (only .json, .item, .first() and .last() have translations)`);
    }
    if (s?.kind === 'nodeItem') {
      if (name === 'json') return { code: nodeRef(s.id), kind: 'unknown', path: true };
      throw this.fail(`.${name} of an item (only .json has a translation)`);
    }
    if (s?.kind === 'math') {
      const fn: Record<string, string> = { floor: '$floor', ceil: '$ceil', abs: '$abs', sqrt: '$sqrt' };
      if (fn[name]) {
        const a = this.args();
        const [arg] = a;
        if (arg === undefined || a.length !== 1) throw this.fail(`Math.${name} with ${a.length} arguments`);
        return { code: `${fn[name]}(${arg.code})`, kind: 'number' };
      }
      if (name === 'max' || name === 'min') {
        const a = this.args();
        return { code: `$${name}([${a.map((x) => x.code).join(', ')}])`, kind: 'number' };
      }
      throw this.fail(`Math.${name}`);
    }
    // Methods of ordinary values.
    if (this.peek('(')) {
      const a = this.args();
      if (name === 'toUpperCase' && a.length === 0) return { code: `$uppercase(${v.code})`, kind: 'string' };
      if (name === 'toLowerCase' && a.length === 0) return { code: `$lowercase(${v.code})`, kind: 'string' };
      if (name === 'toString' && a.length === 0 && (v.kind === 'number' || v.kind === 'string'))
        return { code: `$string(${v.code})`, kind: 'string' };
      const [arg] = a;
      if (name === 'includes' && a.length === 1 && arg?.kind === 'string' && v.kind === 'string')
        return { code: `$contains(${v.code}, ${arg.code})`, kind: 'boolean' };
      throw this.fail(`the method .${name}()`);
    }
    if (name === 'length') {
      return { code: `($type(${v.code}) = "array" ? $count(${v.code}) : $length(${v.code}))`, kind: 'number' };
    }
    if (!v.path) throw this.fail(`.${name} of a computed value`);
    return { code: `${v.code}.${fieldStep(name)}`, kind: 'unknown', path: true };
  }

  private index(v: Val, i: number): Val {
    if (!v.path || v.special) throw this.fail('an index into a computed value');
    this.scope.note?.('an index into an array is a JSONata filter ([n]); over a non-array value [0] is the value itself');
    return { code: `${v.code}[${i}]`, kind: 'unknown', path: true };
  }

  private primary(bool: boolean): Val {
    const t = this.toks[this.pos++];
    if (!t) throw this.fail('an incomplete expression');
    if (t.t === 'num') return { code: String(t.v), kind: 'number' };
    if (t.t === 'str') return { code: jsonLiteral(t.v), kind: 'string' };
    if (t.t === 'op') {
      if (t.v === '(') {
        const v = this.finish(this.ternary(bool));
        this.expect(')');
        return { code: `(${v.code})`, kind: v.kind };
      }
      if (t.v === '[') {
        const items: Val[] = [];
        if (!this.eat(']')) {
          do items.push(this.finish(this.ternary(false)));
          while (this.eat(','));
          this.expect(']');
        }
        this.scope.note?.('array literals are JSONata array constructors (nested arrays from paths are flattened)');
        return { code: `[${items.map((x) => x.code).join(', ')}]`, kind: 'unknown' };
      }
      if (t.v === '{') {
        const entries: string[] = [];
        if (!this.eat('}')) {
          do {
            const k = this.toks[this.pos++];
            if (!k || (k.t !== 'id' && k.t !== 'str')) throw this.fail('an object literal key that is not a name or a string');
            this.expect(':');
            entries.push(`${jsonLiteral(k.v)}: ${this.finish(this.ternary(false)).code}`);
          } while (this.eat(','));
          this.expect('}');
        }
        return { code: `{${entries.join(', ')}}`, kind: 'unknown' };
      }
      throw this.fail(`"${t.v}" here`);
    }
    switch (t.v) {
      case 'true':
      case 'false':
        return { code: t.v, kind: 'boolean' };
      case 'null':
        return { code: 'null', kind: 'null' };
      case '$json':
        return { code: '$input', kind: 'unknown', path: true };
      case '$input':
        return { code: '', kind: 'unknown', special: { kind: 'input' } };
      case 'Math':
        return { code: '', kind: 'unknown', special: { kind: 'math' } };
      case '$node': {
        this.expect('[');
        const n = this.toks[this.pos++];
        this.expect(']');
        if (n?.t !== 'str') throw this.fail('$node[…] with a computed name');
        return this.nodeSpecial(n.v);
      }
      case '$': {
        const a = this.toks[this.pos + 1];
        if (!this.peek('(') || a?.t !== 'str') throw this.fail('$(…) with a computed name');
        this.pos += 2;
        this.expect(')');
        return this.nodeSpecial(a.v);
      }
      case 'Number': {
        const [arg, ...more] = this.args();
        if (arg === undefined || more.length > 0) throw this.fail('Number() with other than one argument');
        return { code: `$number(${arg.code})`, kind: 'number' };
      }
      case 'String': {
        const [arg, ...more] = this.args();
        if (arg === undefined || more.length > 0) throw this.fail('String() with other than one argument');
        return { code: `$string(${arg.code})`, kind: 'string' };
      }
      default:
        throw this.fail(t.v.startsWith('$') ? `${t.v} (no equivalent in our runs)` : `the name ${t.v}`);
    }
  }

  private nodeSpecial(name: string): Val {
    const id = this.scope.idOf(name);
    if (!id)
      throw new Unsupported(
        `expression {{ ${this.src.trim()} }} references node "${name}", which is not in the workflow`,
        'Fix the node name in the expression.',
      );
    return { code: '', kind: 'unknown', special: { kind: 'node', id, name } };
  }
}

function tokText(t: Tok): string {
  return t.t === 'str' ? JSON.stringify(t.v) : String(t.v);
}

/** Deepest bracket nesting the translator parses (real expressions stay far below it). */
const MAX_NESTING = 100;

/** One `{{ … }}` body (JavaScript) as JSONata. */
export function translateJs(src: string, scope: ExpressionScope, opts: { boolean?: boolean } = {}): string {
  const toks = tokenize(src);
  // The parser recurses once per level: deeper input would exhaust this process's stack.
  let depth = 0;
  for (const t of toks) {
    if (t.t === 'op' && (t.v === '(' || t.v === '[' || t.v === '{')) depth++;
    else if (t.t === 'op' && (t.v === ')' || t.v === ']' || t.v === '}')) depth--;
    if (depth > MAX_NESTING) throw untranslatable(src, `brackets nested deeper than ${MAX_NESTING} levels`);
  }
  const parser = new Parser(toks, src, scope);
  const v = opts.boolean ? parser.parseBoolean() : parser.parse();
  scope.counted?.();
  return v.code;
}

// ---------------------------------------------------------------------------------------------
// Templates

type Segment = { lit: string } | { js: string };

/** Splits `text {{ js }} text` into segments; `}}` inside strings or object literals is skipped. */
export function splitTemplate(body: string): Segment[] {
  const out: Segment[] = [];
  let i = 0;
  let lit = '';
  while (i < body.length) {
    if (body.startsWith('{{', i)) {
      let j = i + 2;
      let depth = 0;
      let quote: string | null = null;
      for (; j < body.length; j++) {
        const c = body[j];
        if (quote) {
          if (c === '\\') j++;
          else if (c === quote) quote = null;
          continue;
        }
        if (c === '"' || c === "'" || c === '`') quote = c;
        else if (c === '{') depth++;
        else if (c === '}') {
          if (depth === 0 && body[j + 1] === '}') break;
          depth--;
        }
      }
      if (j >= body.length) {
        lit += body.slice(i);
        break;
      }
      if (lit) out.push({ lit });
      lit = '';
      out.push({ js: body.slice(i + 2, j) });
      i = j + 2;
    } else {
      lit += body[i];
      i++;
    }
  }
  if (lit) out.push({ lit });
  return out;
}

export const isExtExpression = (value: unknown): value is string => typeof value === 'string' && value.startsWith('=');

/**
 * A parameter value as JSONata source: literals become JSON literals, `={{ x }}` the
 * translation of x, and mixed templates a string concatenation (the holes' values are
 * rendered as strings, as the external tool does).
 */
export function toJsonata(value: unknown, scope: ExpressionScope, opts: { boolean?: boolean } = {}): string {
  if (!isExtExpression(value)) return jsonLiteral(value ?? null);
  if (!scope.js) return exactJsonata(value, scope, opts);
  // Notes of a translation that fails half-way describe nothing that runs: keep them until it succeeds.
  const notes: string[] = [];
  let counted = 0;
  try {
    const code = exactJsonata(value, { idOf: scope.idOf, note: (m) => notes.push(m), counted: () => counted++ }, opts);
    for (const m of notes) scope.note?.(m);
    for (; counted > 0; counted--) scope.counted?.();
    return code;
  } catch (err) {
    if (!(err instanceof Untranslatable)) throw err;
    const code = scope.js(value, opts.boolean ? 'boolean' : 'value');
    scope.counted?.();
    return code;
  }
}

function exactJsonata(value: string, scope: ExpressionScope, opts: { boolean?: boolean }): string {
  const segments = splitTemplate(value.slice(1));
  if (segments.length === 0) return '""';
  const [only] = segments;
  if (segments.length === 1 && only && 'js' in only) return translateJs(only.js, scope, opts);
  if (segments.every((s) => 'lit' in s)) return jsonLiteral(value.slice(1));
  return `(${segments.map((s) => ('lit' in s ? jsonLiteral(s.lit) : `$string(${translateJs(s.js, scope)})`)).join(' & ')})`;
}

/** A value for one of our templated fields: literals stay literals (a leading `=` escaped), expressions become `=jsonata`. */
export function toTemplate(value: unknown, scope: ExpressionScope): unknown {
  if (isExtExpression(value)) return `=${toJsonata(value, scope)}`;
  if (typeof value === 'string' && value.startsWith('=')) return `=${jsonLiteral(value)}`;
  if (Array.isArray(value)) return value.map((v) => toTemplate(v, scope));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toTemplate(v, scope)]));
  return value;
}

/** A templated value that must end up a string (headers, query): literals are stringified. */
export function toStringTemplate(value: unknown, scope: ExpressionScope): string {
  if (isExtExpression(value)) {
    return `=$string(${toJsonata(value, scope)})`;
  }
  const s = value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  return s.startsWith('=') ? `=${jsonLiteral(s)}` : s;
}
