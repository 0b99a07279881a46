/**
 * The labelled retrieval set of `npm run bench -- retrieval`: a generated corpus (deterministic)
 * and queries with known answers. Each of 30 manuals is about one subject and is written with
 * the first word of synonym groups the fake embedding model knows (test/fakes/embeddings.ts):
 * ten filler paragraphs on a theme of 8 concepts, and for the first ten manuals one paragraph
 * with a labelled fact (an action and an object concept, a unique form code) whose concepts the
 * rest of its manual does not use (other manuals may). Each fact is asked four ways:
 *
 * - lexical: the fact's own words (what keyword search is built for);
 * - paraphrase: synonyms of the fact's action and object only, without the subject (other
 *   manuals' filler uses the same concepts, so this is the hard case): what embeddings are for;
 * - mixed: the fact's action word, a synonym of its object, and the subject;
 * - identifier: the form code alone.
 *
 * A query's answer is the chunk(s) containing the fact's code.
 */
import { SYNONYM_GROUPS } from '../../test/fakes/embeddings';
import { seededRandom } from '../lib/prng';

const SUBJECTS = [
  'glacier',
  'turbine',
  'orchard',
  'lighthouse',
  'satellite',
  'bakery',
  'harbour',
  'vineyard',
  'observatory',
  'sawmill',
  'greenhouse',
  'brewery',
  'aquarium',
  'quarry',
  'monastery',
  'foundry',
  'planetarium',
  'dairy',
  'refinery',
  'library',
  'stadium',
  'pharmacy',
  'laboratory',
  'railway',
  'airfield',
  'tannery',
  'printworks',
  'apiary',
  'kiln',
  'mill',
];

export interface LabelledQuery {
  query: string;
  style: 'lexical' | 'paraphrase' | 'mixed' | 'identifier';
  /** The code of the fact: relevant chunks contain it. */
  code: string;
}

export interface Corpus {
  documents: Array<{ name: string; content: string }>;
  queries: LabelledQuery[];
}

export function buildCorpus(opts: { facts?: number; seed?: number } = {}): Corpus {
  const random = seededRandom(opts.seed ?? 42);
  const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)];
  const canonical = SYNONYM_GROUPS.map((g) => g[0]);
  const groupOf = (word: string) => SYNONYM_GROUPS.findIndex((g) => g[0] === word);
  const verbs = ['fix', 'buy', 'begin', 'end', 'help', 'delete', 'secure', 'schedule'].map(groupOf);
  const nouns = canonical.map((_, i) => i).filter((i) => !verbs.includes(i) && !['quick', 'big', 'small'].includes(canonical[i]));
  const facts: Array<{ subject: string; action: number; object: number; code: string }> = [];
  const factCount = opts.facts ?? 10;
  const documents = SUBJECTS.map((subject, s) => {
    const fact = s < factCount ? { action: pick(verbs), object: pick(nouns), code: `F-${1000 + s * 37}` } : null;
    if (fact) facts.push({ subject, ...fact });
    const paragraphs: string[] = [`# ${subject} manual`];
    // Each manual's filler draws on a theme of 8 of the other concepts, as real manuals keep to
    // their topic; the fact's concepts appear in its manual only in the fact's paragraph.
    const others = canonical.filter((_, i) => i !== fact?.action && i !== fact?.object);
    const theme = Array.from({ length: 8 }, () => pick(others));
    for (let p = 0; p < 10; p++) {
      const words = Array.from({ length: 7 }, () => pick(theme));
      paragraphs.push(
        `## Section ${p + 1}\n\nAt the ${subject} the ${words[0]} team reviews the ${words[1]} and the ${words[2]} every week. ${capitalise(words[3])} notes about the ${words[4]} are kept with the ${words[5]} log near the ${words[6]} desk.`,
      );
    }
    if (fact) {
      const at = 1 + Math.floor(random() * 10);
      paragraphs.splice(
        at,
        0,
        `## Procedure\n\nTo ${canonical[fact.action]} the ${canonical[fact.object]} at the ${subject}, file form ${fact.code} with the duty officer before noon.`,
      );
    }
    return { name: `${subject}-manual.md`, content: paragraphs.join('\n\n') };
  });
  const queries: LabelledQuery[] = facts.flatMap((f) => {
    const a = SYNONYM_GROUPS[f.action];
    const o = SYNONYM_GROUPS[f.object];
    return [
      { query: `${a[0]} ${o[0]} ${f.subject}`, style: 'lexical' as const, code: f.code },
      { query: `how do I ${a[2]} a ${o[3]}`, style: 'paraphrase' as const, code: f.code },
      { query: `${a[0]} the ${o[1]} ${f.subject}`, style: 'mixed' as const, code: f.code },
      { query: `form ${f.code}`, style: 'identifier' as const, code: f.code },
    ];
  });
  return { documents, queries };
}

const capitalise = (s: string) => s[0].toUpperCase() + s.slice(1);

/** recall@k: share of queries with a relevant result in the top k; MRR: mean 1/rank of the first relevant result (0 when none in the list). */
export function score(rankedRelevance: boolean[][], k: number): { recallAtK: number; mrr: number } {
  let hits = 0;
  let rr = 0;
  for (const ranked of rankedRelevance) {
    const first = ranked.findIndex(Boolean);
    if (first >= 0 && first < k) hits++;
    if (first >= 0) rr += 1 / (first + 1);
  }
  const n = rankedRelevance.length || 1;
  return { recallAtK: hits / n, mrr: rr / n };
}
