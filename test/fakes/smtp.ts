import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/**
 * A real SMTP server on 127.0.0.1 (smtp-server) that accepts one user name and password with
 * AUTH PLAIN or LOGIN. STARTTLS is off (loopback), so clients authenticate in the clear, as
 * `allowInsecureAuth` permits. Records every login attempt (user names only).
 */
export async function startFakeSmtp(opts: {
  username: string;
  password: string;
  /** Called for each message; when it returns true the connection is dropped before the reply to DATA (the client cannot know whether the mail went out). */
  dropData?: () => boolean;
}): Promise<{ port: number; logins: Array<{ username: string; ok: boolean }>; messages: string[]; close(): Promise<void> }> {
  const logins: Array<{ username: string; ok: boolean }> = [];
  /** Raw messages accepted (DATA), in order. */
  const messages: string[] = [];
  const server = new SMTPServer({
    logger: false,
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    onAuth(auth, _session, callback) {
      const ok = auth.username === opts.username && auth.password === opts.password;
      logins.push({ username: String(auth.username), ok });
      if (!ok) return callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
      callback(null, { user: auth.username });
    },
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (opts.dropData?.()) {
          // No answer to DATA: every open connection is cut, as a crash of the server would.
          (server as unknown as { connections: Set<{ _socket?: { destroy(): void } }> }).connections.forEach((c) => c._socket?.destroy());
          return;
        }
        messages.push(Buffer.concat(chunks).toString('utf8'));
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return { port, logins, messages, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
