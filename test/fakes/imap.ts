import net from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A small IMAP4rev1 responder on 127.0.0.1 speaking the real protocol for a session's opening
 * and reading one INBOX: greeting, CAPABILITY, LOGIN with quoted strings or atoms, NOOP,
 * NAMESPACE, LIST, SELECT/EXAMINE INBOX (EXISTS, UIDVALIDITY, UIDNEXT), UID FETCH of
 * `BODY.PEEK[]`/`BODY[]` with literals, LOGOUT. Other commands are answered BAD. Accepts one
 * user name and password; records login attempts (user names only) and every command line.
 */
export interface FakeImap {
  port: number;
  logins: Array<{ username: string; ok: boolean }>;
  /** Command lines received (LOGIN arguments masked). */
  commands: string[];
  /** Appends a message to INBOX with the next UID; returns the UID. */
  deliver(raw: string | Buffer): number;
  /** Starts a new UIDVALIDITY epoch (a recreated mailbox). */
  resetUidValidity(): void;
  close(): Promise<void>;
}

export async function startFakeImap(opts: { username: string; password: string; greeting?: string }): Promise<FakeImap> {
  const logins: Array<{ username: string; ok: boolean }> = [];
  const commands: string[] = [];
  let uidValidity = 1700000001;
  let uidNext = 1;
  let inbox: Array<{ uid: number; raw: Buffer }> = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.setEncoding('utf8');
    socket.write(`${opts.greeting ?? '* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] Fake IMAP ready'}\r\n`);
    let buffer = '';
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      let at: number;
      while ((at = buffer.indexOf('\r\n')) >= 0) {
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + 2);
        respond(socket, line);
      }
    });
  });
  /** Sockets in the middle of AUTHENTICATE PLAIN: the tag waiting for the client's response line. */
  const authenticating = new Map<net.Socket, string>();
  function login(socket: net.Socket, tag: string, username: string | undefined, password: string | undefined): void {
    const ok = username === opts.username && password === opts.password;
    logins.push({ username: username ?? '', ok });
    socket.write(
      ok ? `${tag} OK [CAPABILITY IMAP4rev1] Authentication completed\r\n` : `${tag} NO [AUTHENTICATIONFAILED] Invalid credentials\r\n`,
    );
  }
  function respond(socket: net.Socket, line: string): void {
    const pendingTag = authenticating.get(socket);
    if (pendingTag !== undefined) {
      authenticating.delete(socket);
      const [, username, password] = Buffer.from(line, 'base64').toString('utf8').split('\0');
      return login(socket, pendingTag, username, password);
    }
    const m = /^(\S+) (\S+)(?: (.*))?$/.exec(line);
    if (!m) return void socket.write('* BAD Missing tag\r\n');
    const [, tag, command, args = ''] = m;
    commands.push(['LOGIN', 'AUTHENTICATE'].includes(command.toUpperCase()) ? `${tag} ${command.toUpperCase()} ***` : line);
    switch (command.toUpperCase()) {
      case 'NAMESPACE':
        socket.write(`* NAMESPACE (("" "/")) NIL NIL\r\n${tag} OK NAMESPACE completed\r\n`);
        return;
      case 'LIST':
        socket.write(`* LIST (\\HasNoChildren) "/" INBOX\r\n${tag} OK LIST completed\r\n`);
        return;
      case 'SELECT':
      case 'EXAMINE': {
        if (parseStrings(args)[0]?.toUpperCase() !== 'INBOX') return void socket.write(`${tag} NO Mailbox does not exist\r\n`);
        socket.write(
          `* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft)\r\n* ${inbox.length} EXISTS\r\n* 0 RECENT\r\n` +
            `* OK [UIDVALIDITY ${uidValidity}] UIDs valid\r\n* OK [UIDNEXT ${uidNext}] Predicted next UID\r\n` +
            `${tag} OK [${command.toUpperCase() === 'EXAMINE' ? 'READ-ONLY' : 'READ-WRITE'}] ${command.toUpperCase()} completed\r\n`,
        );
        return;
      }
      case 'UID': {
        const fm = /^FETCH (\S+) \((.*)\)$/i.exec(args);
        if (!fm) return void socket.write(`${tag} BAD Only UID FETCH is served\r\n`);
        const wanted = uidSet(fm[1], inbox.length ? inbox[inbox.length - 1].uid : 0);
        inbox.forEach((msg, i) => {
          if (!wanted(msg.uid)) return;
          socket.write(`* ${i + 1} FETCH (UID ${msg.uid} BODY[] {${msg.raw.length}}\r\n`);
          socket.write(msg.raw);
          socket.write(')\r\n');
        });
        socket.write(`${tag} OK UID FETCH completed\r\n`);
        return;
      }
      case 'CAPABILITY':
        socket.write(`* CAPABILITY IMAP4rev1 AUTH=PLAIN\r\n${tag} OK CAPABILITY completed\r\n`);
        return;
      case 'NOOP':
        socket.write(`${tag} OK NOOP completed\r\n`);
        return;
      case 'LOGIN': {
        const [username, password] = parseStrings(args);
        return login(socket, tag, username, password);
      }
      case 'AUTHENTICATE': {
        const [mechanism, initial] = args.split(' ');
        if (mechanism.toUpperCase() !== 'PLAIN') return void socket.write(`${tag} NO Unsupported mechanism\r\n`);
        if (initial) return (respond(socket, initial === '=' ? '' : initial), void 0);
        authenticating.set(socket, tag);
        socket.write('+ \r\n');
        return;
      }
      case 'LOGOUT':
        socket.write(`* BYE Logging out\r\n${tag} OK LOGOUT completed\r\n`);
        socket.end();
        return;
      default:
        socket.write(`${tag} BAD Unknown command\r\n`);
    }
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    logins,
    commands,
    deliver(raw) {
      const uid = uidNext++;
      inbox.push({ uid, raw: Buffer.isBuffer(raw) ? raw : Buffer.from(raw) });
      return uid;
    },
    resetUidValidity() {
      uidValidity++;
      inbox = inbox.map((msg, i) => ({ uid: i + 1, raw: msg.raw }));
      uidNext = inbox.length + 1;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** IMAP astrings: quoted strings (with \\ escapes) or atoms. */
function parseStrings(text: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < text.length) {
    if (text[i] === ' ') {
      i++;
      continue;
    }
    if (text[i] === '"') {
      let s = '';
      i++;
      while (i < text.length && text[i] !== '"') {
        if (text[i] === '\\') i++;
        s += text[i++];
      }
      i++;
      out.push(s);
    } else {
      const end = text.indexOf(' ', i);
      out.push(text.slice(i, end < 0 ? undefined : end));
      i = end < 0 ? text.length : end;
    }
  }
  return out;
}

/** An IMAP sequence set of UIDs (`1:*`, `4`, `2:5,9`); `*` is the largest UID in the mailbox. */
function uidSet(set: string, largest: number): (uid: number) => boolean {
  const ranges = set.split(',').map((part) => {
    const [a, b = a] = part.split(':').map((x) => (x === '*' ? largest : Number(x)));
    return [Math.min(a, b), Math.max(a, b)] as const;
  });
  return (uid) => ranges.some(([lo, hi]) => uid >= lo && uid <= hi);
}
