import { z } from 'zod';
import { defineArea, envBool } from './define';

/** Outbound HTTP of tenants' workflows (services/kernel/outbound.ts, the guard every http node goes through). */
export const outboundArea = defineArea('outbound', 'Outbound calls', {
  OUTBOUND_ALLOW_PRIVATE_NETWORKS: envBool(false).describe(
    'Let http nodes call private, loopback and link-local addresses (`npm start` turns it on unless set).',
  ),
});

export type OutboundEnv = z.output<typeof outboundArea.schema>;

export interface OutboundConfig {
  /** Lets http nodes call private, loopback and link-local addresses. */
  outboundAllowPrivateNetworks: boolean;
}

export function outboundConfig(e: OutboundEnv): OutboundConfig {
  return { outboundAllowPrivateNetworks: e.OUTBOUND_ALLOW_PRIVATE_NETWORKS };
}
