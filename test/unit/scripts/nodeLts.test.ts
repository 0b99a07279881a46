import { readFileSync } from 'node:fs';
import path from 'node:path';
import { NODE_LTS_VERSION } from '../../../scripts/lib/nodeLts';

// CI tests on NODE_LTS_VERSION because the production image runs it: the two must not drift apart.
describe('the Node.js LTS that CI tests on', () => {
  const root = path.join(__dirname, '../../..');

  it('is the major version every stage of the Dockerfile runs', () => {
    const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    const images = [...dockerfile.matchAll(/^FROM\s+node:(\d+)[^\s]*/gm)].map((m) => m[1]);
    expect(images.length).toBeGreaterThan(0);
    expect(new Set(images)).toEqual(new Set([NODE_LTS_VERSION.split('.')[0]]));
  });

  it('is what .ci/run runs the suite on besides the machine Node', () => {
    const ci = readFileSync(path.join(root, '.ci/run'), 'utf8');
    expect(ci).toContain('scripts/nodeLts.ts');
    expect(ci).toMatch(/PATH="\$\(dirname "\$NODE_LTS"\):\$PATH" npm test/);
  });

  it('is within the range package.json declares', () => {
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
    const minimum = Number(/>=\s*(\d+)/.exec(pkg.engines.node)?.[1]);
    expect(Number(NODE_LTS_VERSION.split('.')[0])).toBeGreaterThanOrEqual(minimum);
  });
});
