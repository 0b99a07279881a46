import { extractPage, normalizeResearchUrl } from '../../../../services/research/fetching';

test('normalizeResearchUrl keeps http(s) URLs without credentials, drops the fragment, resolves relative links', () => {
  expect(normalizeResearchUrl('HTTP://Example.COM:80/a?b=1#frag')).toBe('http://example.com/a?b=1');
  expect(normalizeResearchUrl('../c', 'https://example.com/a/b')).toBe('https://example.com/c');
  expect(normalizeResearchUrl('mailto:a@example.com')).toBeNull();
  expect(normalizeResearchUrl('javascript:alert(1)', 'https://example.com/')).toBeNull();
  expect(normalizeResearchUrl('https://u:p@example.com/')).toBeNull();
  expect(normalizeResearchUrl('not a url')).toBeNull();
});

test('extractPage reads the article, its title, canonical URL and links; navigation and scripts are left out', async () => {
  const html = `<!doctype html><html><head><title>Doc title</title><link rel="canonical" href="/canonical"><script>var secret = 1;</script></head>
    <body><nav><a href="/nav">Navigation menu</a></nav><article><h1>Article heading</h1>
    <p>${'Otters are semiaquatic mammals that eat fish. '.repeat(10)}</p><p>See <a href="/more#x">more</a> and <a href="https://other.example/">elsewhere</a>.</p></article></body></html>`;
  const page = (await extractPage(html, 'text/html', 'https://example.com/page'))!;
  expect(page.title).toBe('Doc title');
  expect(page.canonicalUrl).toBe('https://example.com/canonical');
  expect(page.links).toEqual(['https://example.com/nav', 'https://example.com/more', 'https://other.example/']);
  expect(page.text).toContain('Otters are semiaquatic mammals that eat fish.');
  expect(page.text).not.toContain('var secret');
  expect(page.text).not.toContain('Navigation menu');
});

test('plain text is kept (whitespace tidied); other content types are not read', async () => {
  expect(await extractPage('a  b\r\n\n\n\nc', 'text/plain', 'https://example.com/')).toEqual({
    title: null,
    text: 'a b\n\nc',
    canonicalUrl: null,
    links: [],
  });
  expect(await extractPage('%PDF', 'application/pdf', 'https://example.com/')).toBeNull();
});
