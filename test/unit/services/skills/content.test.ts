import { parseSkillContent } from '../../../../services/skills/content';

describe('skill markdown', () => {
  test('frontmatter name and description; the body, trimmed, as instructions', () => {
    expect(parseSkillContent('---\nname: triage\ndescription: Sort issues\n---\n\n# Triage\n\nSteps.\n')).toEqual({
      name: 'triage',
      description: 'Sort issues',
      instructions: '# Triage\n\nSteps.',
    });
  });

  test('CRLF line ends and a byte-order mark are accepted', () => {
    expect(parseSkillContent('\ufeff---\r\nname: crlf\r\n---\r\nBody\r\n')).toEqual({
      name: 'crlf',
      description: undefined,
      instructions: 'Body',
    });
  });

  test('without a frontmatter name, the first heading of any level, slugified', () => {
    expect(parseSkillContent('Intro\n\n### Review  Pull Requests!! ###\n\n# Later').name).toBe('review-pull-requests');
    expect(parseSkillContent('---\ndescription: d\n---\n# Ünïcode Héading\n').name).toBe('unicode-heading');
    expect(parseSkillContent('no heading at all').name).toBeUndefined();
    expect(parseSkillContent('#not-a-heading').name).toBeUndefined();
  });

  test('no frontmatter: everything is instructions', () => {
    expect(parseSkillContent('plain text')).toEqual({ name: undefined, description: undefined, instructions: 'plain text' });
  });

  test('invalid YAML, a non-mapping and non-string fields are refused', () => {
    expect(() => parseSkillContent('---\nname: [x\n---\nb')).toThrow(/^Skill content has invalid frontmatter: /);
    expect(() => parseSkillContent('---\n- a\n---\nb')).toThrow('Skill content frontmatter must be a mapping with name and description.');
    expect(() => parseSkillContent('---\ndescription: 5\n---\nb')).toThrow('Skill content frontmatter field description must be a string.');
  });

  test('the safe loader refuses code tags', () => {
    expect(() => parseSkillContent('---\nname: !!js/function "function () { return 1 }"\n---\nb')).toThrow(/invalid frontmatter/);
  });
});
