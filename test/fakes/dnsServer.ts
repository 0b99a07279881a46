import dgram from 'node:dgram';
import dns from 'node:dns';
import type { AddressInfo } from 'node:net';
import * as packet from 'dns-packet';

/**
 * A DNS server on loopback (UDP, RFC 1035 via dns-packet) whose A answers come from a script:
 * `answers(name, n)` gives the address for the n-th query of `name` (0-based), with TTL 0,
 * as a rebinding attacker's server would. Unknown names get NXDOMAIN.
 */
export interface FakeDnsServer {
  address: string;
  /** Every question received, in order. */
  queries: string[];
  /** A resolver that asks only this server (what `HostResolver` expects). */
  resolve(hostname: string): Promise<dns.LookupAddress[]>;
  close(): Promise<void>;
}

export async function startFakeDnsServer(answers: (name: string, n: number) => string | undefined): Promise<FakeDnsServer> {
  const socket = dgram.createSocket('udp4');
  const queries: string[] = [];
  const counts = new Map<string, number>();
  socket.on('message', (msg, rinfo) => {
    let query: packet.Packet;
    try {
      query = packet.decode(msg);
    } catch {
      return;
    }
    const question = query.questions?.[0];
    if (!question) return;
    queries.push(`${question.type} ${question.name}`);
    const n = counts.get(question.name) ?? 0;
    counts.set(question.name, n + 1);
    const address = question.type === 'A' ? answers(question.name, n) : undefined;
    const known = answers(question.name, n) !== undefined;
    const reply = packet.encode({
      id: query.id,
      type: 'response',
      flags: packet.RECURSION_DESIRED | packet.RECURSION_AVAILABLE | (known ? 0 : 3) /* NXDOMAIN */,
      questions: [question],
      answers: address ? [{ type: 'A', name: question.name, ttl: 0, class: 'IN', data: address }] : [],
    });
    socket.send(reply, rinfo.port, rinfo.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const address = `127.0.0.1:${(socket.address() as AddressInfo).port}`;
  const resolver = new dns.promises.Resolver({ timeout: 1000, tries: 1 });
  resolver.setServers([address]);
  return {
    address,
    queries,
    resolve: async (hostname) => (await resolver.resolve4(hostname)).map((a) => ({ address: a, family: 4 })),
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
