/**
 * A loopback stand-in for ClamAV's clamd speaking its TCP protocol: `zPING\0` / `nPING\n`
 * answer PONG; `zINSTREAM\0` reads chunks (u32 big-endian length, then the bytes) up to a
 * zero length and answers `stream: OK\0`, or `stream: <signature> FOUND\0` when the content
 * contains one of `signatures`, or `INSTREAM size limit exceeded. ERROR\0` past
 * `streamMaxLength` (then closes, as clamd does). `hold` keeps answers back until released, to
 * see a scan in progress.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface FakeClamd {
  address: string;
  /** Bytes of every INSTREAM received, in order. */
  scanned: Buffer[];
  /** Signature name → byte pattern that triggers it. */
  signatures: Map<string, Buffer>;
  streamMaxLength: number;
  /** While set, INSTREAM answers wait; resolves `scanStarted` when content has fully arrived. */
  hold(): { scanStarted: Promise<void>; release(): void };
  close(): Promise<void>;
}

export async function startFakeClamd(opts: { streamMaxLength?: number } = {}): Promise<FakeClamd> {
  const signatures = new Map<string, Buffer>();
  const scanned: Buffer[] = [];
  let held: { started: () => void; released: Promise<void> } | null = null;
  const sockets = new Set<net.Socket>();

  const fake: FakeClamd = {
    address: '',
    scanned,
    signatures,
    streamMaxLength: opts.streamMaxLength ?? 25 * 1024 * 1024,
    hold() {
      let started!: () => void;
      let release!: () => void;
      const scanStarted = new Promise<void>((r) => (started = r));
      const released = new Promise<void>((r) => (release = r));
      held = { started, released };
      return {
        scanStarted,
        release: () => {
          held = null;
          release();
        },
      };
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };

  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffer = Buffer.alloc(0);
    let mode: 'command' | 'stream' | 'done' = 'command';
    const content: Buffer[] = [];
    let received = 0;

    const answer = async (text: string, close = true) => {
      const wait = held;
      if (wait) {
        wait.started();
        await wait.released;
      }
      socket.write(`${text}\0`);
      if (close) socket.end();
    };

    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (mode === 'command') {
        const end = buffer.findIndex((b) => b === 0 || b === 0x0a);
        if (end < 0) return;
        const command = buffer.subarray(0, end).toString('ascii');
        buffer = buffer.subarray(end + 1);
        if (command === 'zPING' || command === 'nPING') {
          mode = 'done';
          void answer('PONG');
          return;
        }
        if (command !== 'zINSTREAM' && command !== 'nINSTREAM') {
          mode = 'done';
          void answer('UNKNOWN COMMAND');
          return;
        }
        mode = 'stream';
      }
      while (mode === 'stream' && buffer.length >= 4) {
        const length = buffer.readUInt32BE(0);
        if (length === 0) {
          buffer = buffer.subarray(4);
          mode = 'done';
          const all = Buffer.concat(content);
          scanned.push(all);
          const hit = [...signatures.entries()].find(([, pattern]) => all.includes(pattern));
          void answer(hit ? `stream: ${hit[0]} FOUND` : 'stream: OK');
          return;
        }
        if (buffer.length < 4 + length) return;
        received += length;
        if (received > fake.streamMaxLength) {
          mode = 'done';
          void answer('INSTREAM size limit exceeded. ERROR');
          return;
        }
        content.push(Buffer.from(buffer.subarray(4, 4 + length)));
        buffer = buffer.subarray(4 + length);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}
