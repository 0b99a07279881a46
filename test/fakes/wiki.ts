/**
 * Loopback Confluence Cloud REST API v2: `GET /wiki/api/v2/spaces` and
 * `GET /wiki/api/v2/spaces/{id}/pages?body-format=storage&status=…&limit=&cursor=`, answering
 * `{ results, _links: { next?, base } }` with the next page as a relative link carrying the
 * cursor; Basic auth (email and API token); errors `{ errors: [{ status, code, title }] }`.
 */
import { startProviderFake, type ProviderFake } from './providerServer';

export interface WikiPage {
  id: string;
  status: 'current' | 'trashed';
  title: string;
  spaceId: string;
  version: number;
  body: string;
}

export interface WikiFake extends ProviderFake {
  spaces: Map<string, WikiPage[]>;
  putPage(spaceId: string, page: { id: string; title: string; body: string; status?: 'current' | 'trashed' }): WikiPage;
}

const error = (status: number, code: string, title: string) => ({ status, json: { errors: [{ status, code, title, detail: null }] } });

export async function startWikiFake(credentials = { email: 'bot@example.test', token: 'atlassian-fake-token' }): Promise<WikiFake> {
  const spaces = new Map<string, WikiPage[]>();
  const expected = `Basic ${Buffer.from(`${credentials.email}:${credentials.token}`).toString('base64')}`;
  let base = '';
  const fake = await startProviderFake({
    authorized: (h) => h.authorization === expected,
    unauthorized: error(401, 'UNAUTHORIZED', 'Unauthorized'),
    handle: (req) => {
      const limit = Math.min(Number(req.query.get('limit') ?? 25) || 25, 250);
      const offset = Number(req.query.get('cursor') ?? 0);
      if (req.path === '/wiki/api/v2/spaces') {
        const ids = [...spaces.keys()];
        const page = ids.slice(offset, offset + limit);
        return {
          json: {
            results: page.map((id) => ({ id, key: `S${id}`, name: `Space ${id}`, type: 'global', status: 'current' })),
            _links: {
              base,
              ...(offset + limit < ids.length ? { next: `/wiki/api/v2/spaces?cursor=${offset + limit}&limit=${limit}` } : {}),
            },
          },
        };
      }
      const m = /^\/wiki\/api\/v2\/spaces\/([^/]+)\/pages$/.exec(req.path);
      if (!m) return error(404, 'NOT_FOUND', 'Not Found');
      const pages = spaces.get(m[1]);
      if (!pages) return error(404, 'NOT_FOUND', `Space ${m[1]} not found`);
      const statuses = req.query.getAll('status').flatMap((s) => s.split(','));
      const wanted = pages.filter((p) => (statuses.length ? statuses.includes(p.status) : p.status === 'current'));
      const bodyFormat = req.query.get('body-format');
      const slice = wanted.slice(offset, offset + limit);
      const next =
        offset + limit < wanted.length
          ? `/wiki/api/v2/spaces/${m[1]}/pages?cursor=${offset + limit}&limit=${limit}${bodyFormat ? `&body-format=${bodyFormat}` : ''}${statuses.map((s) => `&status=${s}`).join('')}`
          : undefined;
      return {
        json: {
          results: slice.map((p) => ({
            id: p.id,
            status: p.status,
            title: p.title,
            spaceId: p.spaceId,
            parentId: null,
            authorId: 'acc-1',
            createdAt: '2026-01-01T00:00:00.000Z',
            version: { number: p.version, createdAt: '2026-01-01T00:00:00.000Z', message: '', minorEdit: false, authorId: 'acc-1' },
            ...(bodyFormat === 'storage' ? { body: { storage: { representation: 'storage', value: p.body } } } : { body: {} }),
            _links: {
              webui: `/spaces/S${p.spaceId}/pages/${p.id}`,
              editui: `/pages/resumedraft.action?draftId=${p.id}`,
              tinyui: `/x/${p.id}`,
            },
          })),
          _links: { base, ...(next ? { next } : {}) },
        },
      };
    },
  });
  base = `${fake.url}/wiki`;
  return {
    ...fake,
    spaces,
    putPage(spaceId, page) {
      const list = spaces.get(spaceId) ?? [];
      spaces.set(spaceId, list);
      const existing = list.find((p) => p.id === page.id);
      if (existing) {
        Object.assign(existing, { title: page.title, body: page.body, status: page.status ?? 'current', version: existing.version + 1 });
        return existing;
      }
      const created: WikiPage = { id: page.id, status: page.status ?? 'current', title: page.title, spaceId, version: 1, body: page.body };
      list.push(created);
      return created;
    },
  };
}
