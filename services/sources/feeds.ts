import { XMLParser } from 'fast-xml-parser';
import { sha256Hex } from '../kernel/ids';

/** One item of a feed, normalized across RSS 2.0, Atom and JSON Feed. */
export interface FeedItem {
  /** guid / id, else a hash of the link (else of title and date). */
  key: string;
  title: string | null;
  link: string | null;
  summary: string | null;
  publishedAt: string | null;
}

const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  textNodeName: '#text',
  processEntities: true,
  htmlEntities: true,
});

const asArray = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
function text(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string' || typeof v === 'number') return String(v);
  if (typeof v === 'object' && '#text' in v) return text((v as Record<string, unknown>)['#text']);
  return null;
}
/** The item with its key, whatever format it came in: its own id, else its link, else its title and date. */
function feedItem(id: string | null, fields: Omit<FeedItem, 'key'>): FeedItem {
  const { title, link, publishedAt } = fields;
  const key = id ? `id:${id}` : link ? `link:${sha256Hex(link)}` : `item:${sha256Hex(`${title ?? ''}\0${publishedAt ?? ''}`)}`;
  return { key, ...fields };
}
function atomLink(v: unknown): string | null {
  const links = asArray(v as Array<Record<string, unknown>> | Record<string, unknown>);
  const alt = links.find((l) => typeof l === 'object' && (l['@rel'] === undefined || l['@rel'] === 'alternate')) ?? links[0];
  return alt && typeof alt === 'object' ? text(alt['@href']) : text(alt);
}

/** Parses an RSS 2.0, Atom or JSON Feed document; throws on anything else. Items in document order. */
export function parseFeed(body: string): FeedItem[] {
  const trimmed = body.trimStart();
  if (trimmed.startsWith('{')) {
    const doc = JSON.parse(trimmed) as { version?: string; items?: Array<Record<string, unknown>> };
    if (typeof doc.version !== 'string' || !doc.version.includes('jsonfeed.org') || !Array.isArray(doc.items))
      throw new Error('Not a JSON Feed document.');
    return doc.items.map((i) =>
      feedItem(text(i.id), {
        title: text(i.title),
        link: text(i.url),
        summary: text(i.summary) ?? text(i.content_text),
        publishedAt: text(i.date_published),
      }),
    );
  }
  const doc = xml.parse(body) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  if (doc.rss?.channel) {
    return asArray(doc.rss.channel.item as Array<Record<string, unknown>>).map((i) =>
      feedItem(text(i.guid), { title: text(i.title), link: text(i.link), summary: text(i.description), publishedAt: text(i.pubDate) }),
    );
  }
  if (doc.feed) {
    return asArray(doc.feed.entry as Array<Record<string, unknown>>).map((e) =>
      feedItem(text(e.id), {
        title: text(e.title),
        link: atomLink(e.link),
        summary: text(e.summary) ?? text(e.content),
        publishedAt: text(e.published) ?? text(e.updated),
      }),
    );
  }
  throw new Error('Not an RSS 2.0, Atom or JSON Feed document.');
}
