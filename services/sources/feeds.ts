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
function keyOf(id: string | null, link: string | null, title: string | null, date: string | null): string {
  if (id) return `id:${id}`;
  if (link) return `link:${sha256Hex(link)}`;
  return `item:${sha256Hex(`${title ?? ''}\0${date ?? ''}`)}`;
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
    return doc.items.map((i) => {
      const link = text(i.url);
      const date = text(i.date_published);
      return {
        key: keyOf(text(i.id), link, text(i.title), date),
        title: text(i.title),
        link,
        summary: text(i.summary) ?? text(i.content_text),
        publishedAt: date,
      };
    });
  }
  const doc = xml.parse(body) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  if (doc.rss?.channel) {
    return asArray(doc.rss.channel.item as Array<Record<string, unknown>>).map((i) => {
      const link = text(i.link);
      const date = text(i.pubDate);
      return {
        key: keyOf(text(i.guid), link, text(i.title), date),
        title: text(i.title),
        link,
        summary: text(i.description),
        publishedAt: date,
      };
    });
  }
  if (doc.feed) {
    return asArray(doc.feed.entry as Array<Record<string, unknown>>).map((e) => {
      const link = atomLink(e.link);
      const date = text(e.published) ?? text(e.updated);
      return {
        key: keyOf(text(e.id), link, text(e.title), date),
        title: text(e.title),
        link,
        summary: text(e.summary) ?? text(e.content),
        publishedAt: date,
      };
    });
  }
  throw new Error('Not an RSS 2.0, Atom or JSON Feed document.');
}
