import net from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A small IMAP4rev1 responder on 127.0.0.1 speaking the real protocol for a session's opening:
 * greeting, CAPABILITY, LOGIN with quoted strings or atoms, NOOP, LOGOUT. Other commands are
 * answered BAD. Accepts one user name and password; records login attempts (user names only).
 */
export async function startFakeImap(opts: { username: string; password: string; greeting?: string }): Promise<{ port: number; logins: Array<{ username: string; ok: boolean }>; close(): Promise<void> }> {
  const logins: Array<{ username: string; ok: boolean }> = [];
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
  function respond(socket: net.Socket, line: string): void {
    const m = /^(\S+) (\S+)(?: (.*))?$/.exec(line);
    if (!m) return void socket.write('* BAD Missing tag\r\n');
    const [, tag, command, args = ''] = m;
    switch (command.toUpperCase()) {
      case 'CAPABILITY':
        socket.write(`* CAPABILITY IMAP4rev1 AUTH=PLAIN\r\n${tag} OK CAPABILITY completed\r\n`);
        return;
      case 'NOOP':
        socket.write(`${tag} OK NOOP completed\r\n`);
        return;
      case 'LOGIN': {
        const [username, password] = parseStrings(args);
        const ok = username === opts.username && password === opts.password;
        logins.push({ username: username ?? '', ok });
        socket.write(ok ? `${tag} OK [CAPABILITY IMAP4rev1] LOGIN completed\r\n` : `${tag} NO [AUTHENTICATIONFAILED] Invalid credentials\r\n`);
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
