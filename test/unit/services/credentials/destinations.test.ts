import { credentialDestinations, hostAllowed, impliedHosts, normalizeAllowedHosts } from '../../../../services/credentials/destinations';

const allowed = (patterns: string[], url: string) => hostAllowed(patterns, new URL(url));

test('exact hosts match any port unless the pattern names one; default ports count', () => {
  expect(allowed(['api.example.com'], 'https://api.example.com/x')).toBe(true);
  expect(allowed(['api.example.com'], 'http://API.example.com.:8080/x')).toBe(true);
  expect(allowed(['api.example.com'], 'https://example.com/')).toBe(false);
  expect(allowed(['api.example.com'], 'https://api.example.com.evil.test/')).toBe(false);
  expect(allowed(['api.example.com:443'], 'https://api.example.com/')).toBe(true);
  expect(allowed(['api.example.com:443'], 'http://api.example.com/')).toBe(false);
  expect(allowed(['127.0.0.1:4000'], 'http://127.0.0.1:4001/')).toBe(false);
  expect(allowed(['127.0.0.1'], 'http://0x7f.0.0.1:4001/')).toBe(true);
  expect(allowed(['[::1]:8080'], 'http://[::1]:8080/')).toBe(true);
  expect(allowed(['[::1]'], 'http://[::2]/')).toBe(false);
  expect(allowed([], 'https://api.example.com/')).toBe(false);
});

test('a wildcard matches subdomains at any depth, not the domain itself nor look-alikes', () => {
  expect(allowed(['*.example.com'], 'https://a.example.com/')).toBe(true);
  expect(allowed(['*.example.com'], 'https://a.b.example.com/')).toBe(true);
  expect(allowed(['*.example.com'], 'https://example.com/')).toBe(false);
  expect(allowed(['*.example.com'], 'https://badexample.com/')).toBe(false);
  expect(allowed(['*.example.com'], 'https://a.example.com.evil.test/')).toBe(false);
});

test('normalising: lowercase, punycode, no duplicates; anything that is not a host is refused', () => {
  expect(
    normalizeAllowedHosts(['API.Example.com', 'api.example.com', '*.Example.COM', 'bücher.example', '[::1]:80', 'example.com.']),
  ).toEqual(['api.example.com', '*.example.com', 'xn--bcher-kva.example', '[::1]:80', 'example.com']);
  for (const bad of [
    '',
    ' ',
    '*',
    '*.com',
    '*.*.example.com',
    'https://a.example.com',
    'a.example.com/x',
    'a.example.com:99999',
    'a@b.example',
    '*.1.2.3.4',
    'a b',
  ]) {
    expect(() => normalizeAllowedHosts([bad])).toThrow(/allowedHosts\[0\]/);
  }
});

test('implied hosts: the value’s own URLs and server, and the provider’s configured base URL when the value has none', () => {
  expect(impliedHosts('bearer', { token: 't' })).toEqual([]);
  expect(impliedHosts('bearer', { token: 't', probeUrl: 'https://probe.example.com/me' })).toEqual(['probe.example.com']);
  expect(impliedHosts('smtp', { host: 'smtp.example.com', port: 587 })).toEqual(['smtp.example.com']);
  expect(impliedHosts('llm', { baseUrl: 'http://127.0.0.1:11434/v1' })).toEqual(['127.0.0.1:11434']);
  expect(impliedHosts('repo', { token: 't' }, { repo: ['https://api.github.com'] })).toEqual(['api.github.com']);
  expect(impliedHosts('repo', { token: 't', baseUrl: 'https://git.corp.example/api/v3' }, { repo: ['https://api.github.com'] })).toEqual([
    'git.corp.example',
  ]);
  // A provider's configured URL never widens an http type.
  expect(impliedHosts('bearer', { token: 't' }, { bearer: ['https://x.example.com'] })).toEqual([]);
  expect(
    credentialDestinations({ type: 'bearer', allowedHosts: ['a.example.com'] }, { token: 't', probeUrl: 'https://a.example.com/' }),
  ).toEqual(['a.example.com']);
});
