/**
 * Fake local AI CLIs: small node scripts with a shebang, written to a test's temp directory and
 * made executable, that speak the observable behaviour the service relies on
 * (services/workers/localAiCli/protocol.ts): `--version`, the sign-in status (exit 0 when signed
 * in by the login's file in $HOME or, for cliA, a token starting with `tok-valid` in
 * CLI_A_OAUTH_TOKEN), a browser login that prints an authorization URL whose redirect_uri is its
 * own loopback server and exits 0 once called back with the right state and a code, and the model
 * list. A control file next to the script switches behaviour: `hang` (never answers),
 * `printEnv` (the model list is the process's environment: names, and HOME's value),
 * `loginFails` (the login exits 2 without a URL). Signed in, a one-shot prompt answers
 * `<kind> answers: <last USER part of the prompt>` in the CLI's own output format.
 */
import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';

export type FakeCliMode = 'normal' | 'hang' | 'printEnv' | 'loginFails';

export const VALID_TOKEN_PREFIX = 'tok-valid';

function script(kind: 'cliA' | 'cliB'): string {
  const authStatus = kind === 'cliA' ? 'auth status --json' : 'login status';
  const login = kind === 'cliA' ? 'auth login' : 'login';
  return `#!/usr/bin/env node
const fs = require('fs');
const path = require('path');
const http = require('http');
const crypto = require('crypto');
const KIND = ${JSON.stringify(kind)};
let control = {};
try { control = JSON.parse(fs.readFileSync(__filename + '.control.json', 'utf8')); } catch {}
const cmd = process.argv.slice(2).join(' ');
const authFile = path.join(process.env.HOME || '/nonexistent', '.fake-cli', 'auth.json');
if (control.mode === 'hang') { setInterval(() => {}, 1000); return; }
const token = process.env.CLI_A_OAUTH_TOKEN;
const signedIn = () => fs.existsSync(authFile) || (KIND === 'cliA' && typeof token === 'string' && token.startsWith(${JSON.stringify(VALID_TOKEN_PREFIX)}));
if (cmd === '--version') { console.log(KIND + ' 1.2.3 (fake)'); process.exit(0); }
const argv = process.argv.slice(2);
// One-shot prompts (agent runs): cliA \`-p <prompt> --output-format json\`, cliB \`exec --json <prompt>\`.
if ((KIND === 'cliA' && argv[0] === '-p') || (KIND === 'cliB' && argv[0] === 'exec')) {
  if (!signedIn()) { console.error('not signed in'); process.exit(3); }
  const prompt = KIND === 'cliA' ? argv[1] : argv[argv.length - 1];
  const user = prompt.split('\\n\\n').filter((p) => p.startsWith('USER: ')).pop() || '';
  const answer = KIND + ' answers: ' + user.slice('USER: '.length);
  if (KIND === 'cliA') console.log(JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: answer }));
  else { console.log(JSON.stringify({ type: 'thread.started' })); console.log(JSON.stringify({ type: 'item.completed', item: { type: 'agent_message', text: answer } })); }
  process.exit(0);
}
if (cmd === ${JSON.stringify(authStatus)}) {
  const ok = signedIn();
  console.log(JSON.stringify({ loggedIn: ok }));
  process.exit(ok ? 0 : 1);
}
if (cmd === 'models --json') {
  if (control.mode === 'printEnv') {
    console.log(JSON.stringify(Object.keys(process.env).map((k) => ({ id: k, name: k === 'HOME' ? process.env.HOME : k }))));
    process.exit(0);
  }
  if (!signedIn()) { console.error('not signed in'); process.exit(3); }
  console.log(JSON.stringify([{ id: KIND + '-large', name: 'Large' }, KIND + '-small']));
  process.exit(0);
}
if (cmd === ${JSON.stringify(login)}) {
  if (control.mode === 'loginFails') { console.error('login is broken'); process.exit(2); }
  const state = crypto.randomBytes(8).toString('hex');
  const server = http.createServer((req, res) => {
    const u = new URL(req.url, 'http://localhost');
    if (u.pathname !== '/callback') { res.writeHead(404); res.end(); return; }
    const ok = u.searchParams.get('state') === state && Boolean(u.searchParams.get('code'));
    if (ok) {
      fs.mkdirSync(path.dirname(authFile), { recursive: true });
      fs.writeFileSync(authFile, JSON.stringify({ code: u.searchParams.get('code') }));
    }
    res.end(ok ? 'signed in' : 'refused', () => process.exit(ok ? 0 : 4));
  });
  server.listen(0, '127.0.0.1', () => {
    const redirect = 'http://localhost:' + server.address().port + '/callback';
    console.log('Open this address to sign in:');
    console.log('https://auth.example.test/oauth/authorize?client_id=fake&redirect_uri=' + encodeURIComponent(redirect) + '&state=' + state);
  });
  return;
}
console.error('unknown command: ' + cmd);
process.exit(64);
`;
}

export interface FakeCli {
  path: string;
  setMode(mode: FakeCliMode): Promise<void>;
}

/** Writes the fake `kind` CLI into `dir` (executable) and returns its path and its behaviour switch. */
export async function writeFakeCli(dir: string, kind: 'cliA' | 'cliB'): Promise<FakeCli> {
  const file = path.join(dir, `fake-${kind}`);
  await writeFile(file, script(kind));
  await chmod(file, 0o755);
  const setMode = (mode: FakeCliMode) => writeFile(`${file}.control.json`, JSON.stringify({ mode }));
  await setMode('normal');
  return { path: file, setMode };
}
