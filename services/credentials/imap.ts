import net from 'node:net';
import tls from 'node:tls';

/**
 * A minimal IMAP4rev1 client (RFC 9051 / 3501) for one thing: opening a session and checking
 * a user name and password with LOGIN, then logging out. It speaks the protocol directly:
 * greeting, CAPABILITY, STARTTLS (on a plain connection whose server offers it), LOGIN with
 * quoted strings, LOGOUT. Values with line breaks are refused before they reach it.
 */
export interface ImapLoginInput {
  /** Address to connect to (already checked by the outbound guard). */
  address: string;
  /** Host name for TLS (SNI and certificate check). */
  servername: string;
  port: number;
  secure: boolean;
  username: string;
  password: string;
  timeoutMs: number;
}

export type ImapLoginOutcome =
  { ok: true; message: string } | { ok: false; kind: 'auth' | 'protocol' | 'network' | 'timeout'; message: string };

/** IMAP quoted string: backslash and double quote escaped. */
const quote = (s: string) => `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

export async function imapLogin(input: ImapLoginInput): Promise<ImapLoginOutcome> {
  let socket: net.Socket = input.secure
    ? tls.connect({ host: input.address, port: input.port, servername: net.isIP(input.servername) ? undefined : input.servername })
    : net.connect({ host: input.address, port: input.port });
  let buffer = '';
  let waiter: (() => void) | null = null;
  let failure: ImapLoginOutcome | null = null;
  const lines: string[] = [];
  const attach = (s: net.Socket) => {
    s.setEncoding('utf8');
    s.on('data', (chunk: string) => {
      buffer += chunk;
      let at: number;
      while ((at = buffer.indexOf('\r\n')) >= 0) {
        lines.push(buffer.slice(0, at));
        buffer = buffer.slice(at + 2);
      }
      waiter?.();
    });
    s.on('error', (err: NodeJS.ErrnoException) => {
      failure ??= { ok: false, kind: 'network', message: `IMAP connection failed: ${err.code ?? err.message}.` };
      waiter?.();
    });
    s.on('close', () => {
      failure ??= { ok: false, kind: 'network', message: 'The IMAP server closed the connection.' };
      waiter?.();
    });
  };
  attach(socket);
  const timer = setTimeout(() => {
    failure ??= { ok: false, kind: 'timeout', message: `The IMAP server did not answer within ${input.timeoutMs} ms.` };
    waiter?.();
  }, input.timeoutMs);

  /** The next line; throws the recorded failure when the connection ends or times out first. */
  const nextLine = async (): Promise<string> => {
    for (;;) {
      const line = lines.shift();
      if (line !== undefined) return line;
      if (failure) throw failure;
      await new Promise<void>((resolve) => (waiter = resolve));
      waiter = null;
    }
  };
  /** Sends a tagged command and collects untagged lines until its completion. */
  const command = async (tag: string, text: string): Promise<{ status: string; rest: string; untagged: string[] }> => {
    socket.write(`${tag} ${text}\r\n`);
    const untagged: string[] = [];
    for (;;) {
      const line = await nextLine();
      if (line.startsWith(`${tag} `)) {
        const [, status = '', ...rest] = line.split(' ');
        return { status: status.toUpperCase(), rest: rest.join(' '), untagged };
      }
      untagged.push(line);
    }
  };

  try {
    const greeting = await nextLine();
    if (/^\* BYE/i.test(greeting)) return { ok: false, kind: 'protocol', message: 'The IMAP server refused the session.' };
    if (!/^\* (OK|PREAUTH)/i.test(greeting))
      return { ok: false, kind: 'protocol', message: 'The server did not greet like an IMAP server.' };
    if (!input.secure) {
      const caps = await command('a1', 'CAPABILITY');
      const capabilities = caps.untagged.join(' ').toUpperCase();
      if (capabilities.includes('STARTTLS')) {
        const started = await command('a2', 'STARTTLS');
        if (started.status !== 'OK') return { ok: false, kind: 'protocol', message: 'The IMAP server offered STARTTLS but refused it.' };
        socket.removeAllListeners('data');
        socket.removeAllListeners('close');
        socket.removeAllListeners('error');
        socket = tls.connect({ socket, servername: net.isIP(input.servername) ? undefined : input.servername });
        attach(socket);
        await new Promise<void>((resolve, reject) => {
          socket.once('secureConnect', () => resolve());
          socket.once('error', reject);
        }).catch((err: Error) => {
          throw {
            ok: false,
            kind: 'network',
            message: `TLS negotiation with the IMAP server failed: ${(err as NodeJS.ErrnoException).code ?? err.message}.`,
          } satisfies ImapLoginOutcome;
        });
      } else if (capabilities.includes('LOGINDISABLED')) {
        return { ok: false, kind: 'protocol', message: 'The IMAP server refuses LOGIN without TLS; set secure: true or use port 993.' };
      }
    }
    const login = await command('a3', `LOGIN ${quote(input.username)} ${quote(input.password)}`);
    if (login.status === 'NO') return { ok: false, kind: 'auth', message: 'The IMAP server refused the user name or password.' };
    if (login.status !== 'OK')
      return { ok: false, kind: 'protocol', message: `The IMAP server answered LOGIN with ${login.status || 'nothing'}.` };
    await command('a4', 'LOGOUT').catch(() => undefined);
    return { ok: true, message: 'Logged in to the IMAP server.' };
  } catch (err) {
    if (err && typeof err === 'object' && 'kind' in err) return err as ImapLoginOutcome;
    throw err;
  } finally {
    clearTimeout(timer);
    socket.destroy();
  }
}
