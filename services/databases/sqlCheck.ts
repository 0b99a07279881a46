/**
 * Layer 1 of the read-only SQL sandbox: the statement is parsed by the real PostgreSQL parser
 * (libpg-query, PostgreSQL's own grammar compiled to WebAssembly) and its syntax tree must be
 * a single SELECT (or WITH … SELECT, VALUES, TABLE) built only from known read-only constructs,
 * whose table references are only this database's tables (or CTEs in scope), whose functions
 * are on an allowlist and whose casts name plain data types. Anything else is refused with a
 * message saying what. The check fails closed: a syntax node it does not know is refused.
 *
 * Layers 2 (READ ONLY transaction, statement_timeout, search_path, the database's own role)
 * and 3 (row and byte caps) do not rely on this one; see query.ts.
 */
import { invalidInput } from '../kernel/errors';

export const SQL_NOT_ALLOWED = 'sql_not_allowed';
export const MAX_SQL_LENGTH = 100_000;
const MAX_DEPTH = 400;

/**
 * Syntax nodes a read-only query may contain (the names libpg-query gives them). Statements
 * other than SELECT, INTO and locking clauses, XML, TABLESAMPLE, JSON_TABLE and parameters
 * are absent on purpose.
 */
const ALLOWED_NODES = new Set([
  'SelectStmt',
  'ResTarget',
  'ColumnRef',
  'String',
  'Integer',
  'Float',
  'Boolean',
  'BitString',
  'A_Star',
  'A_Const',
  'A_Expr',
  'A_Indirection',
  'A_Indices',
  'A_ArrayExpr',
  'BoolExpr',
  'NullTest',
  'BooleanTest',
  'SubLink',
  'RangeVar',
  'RangeSubselect',
  'RangeFunction',
  'JoinExpr',
  'SortBy',
  'WindowDef',
  'Alias',
  'WithClause',
  'CommonTableExpr',
  'CTESearchClause',
  'CTECycleClause',
  'TypeCast',
  'TypeName',
  'CaseExpr',
  'CaseWhen',
  'CoalesceExpr',
  'MinMaxExpr',
  'RowExpr',
  'FuncCall',
  'NamedArgExpr',
  'SQLValueFunction',
  'CollateClause',
  'GroupingSet',
  'GroupingFunc',
  'ColumnDef',
  'List',
  'JsonObjectConstructor',
  'JsonArrayConstructor',
  'JsonArrayQueryConstructor',
  'JsonObjectAgg',
  'JsonArrayAgg',
  'JsonAggConstructor',
  'JsonValueExpr',
  'JsonKeyValue',
  'JsonOutput',
  'JsonReturning',
  'JsonFormat',
  'JsonIsPredicate',
  'JsonFuncExpr',
  'JsonBehavior',
  'JsonArgument',
  'JsonParseExpr',
  'JsonScalarExpr',
  'JsonSerializeExpr',
]);

/**
 * Functions a query may call: pure computations on values. No pg_*, settings, sleeps, large
 * objects, links, sequences or transaction ids; and none that allocate a size the caller names
 * in one call (repeat, lpad, rpad, format widths), which could ask for a gigabyte at once.
 */
export const ALLOWED_FUNCTIONS = new Set(
  `count sum avg min max array_agg string_agg json_agg jsonb_agg json_object_agg jsonb_object_agg bool_and bool_or every
  stddev stddev_pop stddev_samp variance var_pop var_samp percentile_cont percentile_disc mode corr covar_pop covar_samp
  regr_slope regr_intercept bit_and bit_or
  row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value
  lower upper initcap length char_length character_length octet_length bit_length substring substr left right trim btrim
  ltrim rtrim replace translate reverse concat concat_ws position strpos split_part starts_with
  regexp_replace regexp_match regexp_matches regexp_like regexp_count regexp_split_to_array string_to_array
  array_to_string md5 to_hex ascii chr overlay normalize quote_literal quote_ident
  abs ceil ceiling floor round trunc sign sqrt cbrt power pow exp ln log log10 mod div pi degrees radians sin cos tan
  asin acos atan atan2 random width_bucket gcd lcm
  to_char to_number to_date to_timestamp
  now date_trunc date_part extract age make_date make_time make_timestamp make_timestamptz make_interval date_bin
  timezone justify_days justify_hours justify_interval isfinite clock_timestamp statement_timestamp transaction_timestamp
  to_json to_jsonb json_build_object jsonb_build_object json_build_array jsonb_build_array json_object jsonb_object
  json_array_length jsonb_array_length json_extract_path json_extract_path_text jsonb_extract_path jsonb_extract_path_text
  json_typeof jsonb_typeof json_array_elements jsonb_array_elements json_array_elements_text jsonb_array_elements_text
  json_each jsonb_each json_each_text jsonb_each_text json_object_keys jsonb_object_keys jsonb_set jsonb_insert
  jsonb_strip_nulls json_strip_nulls jsonb_pretty jsonb_path_query jsonb_path_query_array jsonb_path_query_first
  jsonb_path_exists jsonb_path_match row_to_json array_to_json
  array_length array_position array_positions array_append array_prepend array_cat array_remove array_replace
  cardinality unnest array_lower array_upper generate_series num_nulls num_nonnulls gen_random_uuid`
    .split(/\s+/)
    .filter(Boolean),
);

/** Types a cast or a column definition may name (after dropping a `pg_catalog.` qualifier). */
export const ALLOWED_TYPES = new Set(
  `text varchar bpchar char character varying int2 int4 int8 smallint integer bigint int numeric decimal float4 float8
  real double precision bool boolean date time timetz timestamp timestamptz interval json jsonb uuid`
    .split(/\s+/)
    .filter(Boolean),
);

export class SqlRefusal extends Error {}

const refuse = (message: string): never => {
  throw new SqlRefusal(message);
};

interface Scope {
  tables: ReadonlySet<string>;
  ctes: ReadonlySet<string>;
}

type Json = Record<string, unknown>;

function names(list: unknown): string[] {
  return Array.isArray(list) ? list.map((n) => (n as { String?: { sval?: string } })?.String?.sval ?? '') : [];
}

function checkRangeVar(rv: Json, scope: Scope): void {
  const name = String(rv.relname ?? '');
  if (rv.schemaname || rv.catalogname)
    refuse(
      `Table "${[rv.catalogname, rv.schemaname, name].filter(Boolean).join('.')}" is not allowed: name this database's tables without a schema.`,
    );
  // A table of this database may still bear a pg_ name made before such names were refused:
  // the session's search_path puts its schema ahead of pg_catalog (query.ts), so it is that table.
  if (scope.ctes.has(name) || scope.tables.has(name)) return;
  if (name.toLowerCase().startsWith('pg_'))
    refuse(`Table "${name}" is not allowed: PostgreSQL's catalogue is out of reach of read-only queries.`);
  refuse(`Unknown table "${name}": this database has ${[...scope.tables].sort().join(', ') || 'no tables'}.`);
}

function checkFunction(fn: Json): void {
  const parts = names(fn.funcname).map((p) => p.toLowerCase());
  const name = parts.length === 2 && parts[0] === 'pg_catalog' ? parts[1] : parts.length === 1 ? parts[0] : null;
  if (!name || !ALLOWED_FUNCTIONS.has(name)) refuse(`Function "${parts.join('.')}" is not allowed in read-only queries.`);
}

function checkType(typeName: unknown, scope: Scope): void {
  const parts = names((typeName as Json | null)?.names).map((p) => p.toLowerCase());
  const name = parts.length === 2 && parts[0] === 'pg_catalog' ? parts[1] : parts.length === 1 ? parts[0] : null;
  if (!name || !ALLOWED_TYPES.has(name)) refuse(`Type "${parts.join('.')}" is not allowed in read-only queries.`);
  // Each table has a row type of its name in the database's schema, which the search_path
  // searches before pg_catalog: `::date` would mean the table "date"'s row type.
  if (parts.length === 1 && name && scope.tables.has(name))
    refuse(`Type "${parts[0]}" is ambiguous: this database has a table named "${parts[0]}"; write pg_catalog.${parts[0]}.`);
}

/** SQL value functions that name the server's side of the session (its login role, its database). */
const SERVER_VALUE_FUNCTIONS: Record<string, string> = { SVFOP_SESSION_USER: 'SESSION_USER', SVFOP_CURRENT_CATALOG: 'CURRENT_CATALOG' };

function walk(value: unknown, scope: Scope, depth: number): void {
  if (depth > MAX_DEPTH) refuse('The query is nested too deeply.');
  if (Array.isArray(value)) {
    for (const v of value) walk(v, scope, depth + 1);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const obj = value as Json;
  // A bare relation reference (outside a RangeVar wrapper) is checked all the same.
  if ('relname' in obj) checkRangeVar(obj, scope);
  for (const [key, child] of Object.entries(obj)) {
    if (/^[A-Z]/.test(key)) {
      if (!ALLOWED_NODES.has(key)) refuse(describeNode(key));
      if (key === 'SelectStmt') selectStmt(child as Json, scope, depth + 1);
      else if (key === 'RangeVar') checkRangeVar(child as Json, scope);
      else {
        if (key === 'FuncCall') checkFunction(child as Json);
        const server = key === 'SQLValueFunction' ? SERVER_VALUE_FUNCTIONS[String((child as Json).op)] : undefined;
        if (server) refuse(`${server} is not allowed in read-only queries.`);
        walk(child, scope, depth + 1);
      }
    } else if (key === 'intoClause') {
      refuse('SELECT INTO is not allowed: queries are read-only.');
    } else if (key === 'lockingClause') {
      refuse('FOR UPDATE and FOR SHARE are not allowed: queries are read-only.');
    } else {
      if (key === 'typeName') checkType(child, scope);
      walk(child, scope, depth + 1);
    }
  }
}

/**
 * A SELECT: its CTEs are visible in its body, its set-operation branches and (for WITH
 * RECURSIVE) in each other; a plain WITH's CTE sees only the CTEs before it. So a CTE cannot
 * lend its name to a catalogue table outside its scope.
 */
function selectStmt(stmt: Json, scope: Scope, depth: number): void {
  if (stmt.intoClause) refuse('SELECT INTO is not allowed: queries are read-only.');
  if (stmt.lockingClause) refuse('FOR UPDATE and FOR SHARE are not allowed: queries are read-only.');
  let inner = scope;
  const withClause = stmt.withClause as Json | undefined;
  if (withClause) {
    const ctes = (Array.isArray(withClause.ctes) ? withClause.ctes : []) as Json[];
    const cteNames = ctes.map((c) => String((c.CommonTableExpr as Json | undefined)?.ctename ?? ''));
    ctes.forEach((cte, i) => {
      const visible = withClause.recursive ? cteNames : cteNames.slice(0, i);
      walk(cte, { tables: scope.tables, ctes: new Set([...scope.ctes, ...visible]) }, depth + 1);
    });
    inner = { tables: scope.tables, ctes: new Set([...scope.ctes, ...cteNames]) };
  }
  for (const branch of ['larg', 'rarg']) if (stmt[branch]) selectStmt(stmt[branch] as Json, inner, depth + 1);
  const rest = Object.fromEntries(Object.entries(stmt).filter(([k]) => k !== 'withClause' && k !== 'larg' && k !== 'rarg'));
  walk(rest, inner, depth + 1);
}

function describeNode(node: string): string {
  if (node.endsWith('Stmt'))
    return `Only a single SELECT statement is allowed (got ${node
      .replace(/Stmt$/, '')
      .replace(/([a-z])([A-Z])/g, '$1 $2')
      .toUpperCase()}).`;
  return `The construct ${node} is not allowed in read-only queries.`;
}

/**
 * Checks one read-only statement against this database's table names. Throws a 400
 * (`sql_not_allowed`, or `sql_error` for a syntax error with PostgreSQL's message) otherwise.
 */
export async function checkReadOnlySql(sql: string, tables: Iterable<string>): Promise<void> {
  if (sql.length > MAX_SQL_LENGTH) throw invalidInput(`The query is over ${MAX_SQL_LENGTH} characters.`, { code: SQL_NOT_ALLOWED });
  let tree: { stmts?: Array<{ stmt?: Json }> };
  try {
    // Loaded on first use: the module instantiates its WebAssembly parser at load, ≈ 10–18 MiB
    // of RSS that only database-query steps need.
    const { parse } = await import('libpg-query');
    tree = await parse(sql);
  } catch (err) {
    throw invalidInput((err as Error).message, { code: 'sql_error' });
  }
  try {
    const stmts = tree.stmts ?? [];
    const stmt = stmts.length === 1 ? stmts[0]?.stmt : undefined;
    if (!stmt) return refuse(stmts.length === 0 ? 'Send one SELECT statement.' : `Send one SELECT statement, not ${stmts.length}.`);
    // A statement node has one key: its kind.
    const [entry] = Object.entries(stmt);
    if (!entry) return refuse('Send one SELECT statement.');
    const [kind, body] = entry;
    if (kind !== 'SelectStmt') refuse(describeNode(kind));
    selectStmt(body as Json, { tables: new Set(tables), ctes: new Set() }, 0);
  } catch (err) {
    if (err instanceof SqlRefusal) throw invalidInput(err.message, { code: SQL_NOT_ALLOWED });
    throw err;
  }
}
