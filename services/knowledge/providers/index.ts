/** The providers registry: drive, wiki, chat, repo, certified unless the deployment says otherwise. */
import type { ConnectorProviderId } from '../../../db/entities';
import { chatProvider } from './chat';
import { driveProvider } from './drive';
import { repoProvider } from './repo';
import type { ConnectorProvider } from './types';
import { wikiProvider } from './wiki';

export {
  acceptedCredentialTypes,
  type ConnectorProvider,
  defaultBaseUrl,
  FetchBudget,
  type ProviderContext,
  providerFailure,
  storable,
  stringList,
  type SyncBatch,
  SyncError,
  type SyncItem,
  type SyncOptions,
} from './types';

export const PROVIDERS: Record<ConnectorProviderId, ConnectorProvider> = {
  drive: driveProvider,
  wiki: wikiProvider,
  chat: chatProvider,
  repo: repoProvider,
};

export interface ProviderRegistryEntry {
  id: ConnectorProviderId;
  label: string;
  scopes: string[];
  certified: boolean;
  capabilities: string[];
}

export const SYNC_CAPABILITY = 'knowledge.sync';

/** `{ id, label, scopes, certified, capabilities }` per provider; an uncertified provider has no capabilities. */
export function providerRegistry(certified: string[]): ProviderRegistryEntry[] {
  return Object.values(PROVIDERS).map((p) => {
    const ok = certified.includes(p.id);
    return { id: p.id, label: p.label, scopes: p.scopes, certified: ok, capabilities: ok ? [SYNC_CAPABILITY] : [] };
  });
}
