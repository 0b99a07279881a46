/**
 * Skill markdown (`content` of a create): YAML frontmatter with `name` and `description`, the
 * body as the instructions. Without a frontmatter name, the first heading of the body, slugified,
 * names the skill. The frontmatter is parsed with front-matter's safe YAML loader (no custom
 * tags, no code).
 */
import frontMatter from 'front-matter';
import slugify from 'slugify';
import { invalidInput } from '../kernel/errors';

export interface SkillContent {
  name?: string;
  description?: string;
  instructions: string;
}

export function parseSkillContent(content: string): SkillContent {
  const text = content.replace(/\r\n?/g, '\n');
  let attributes: unknown;
  let body: string;
  try {
    ({ attributes, body } = frontMatter<unknown>(text));
  } catch (err) {
    const reason = (err as { reason?: string }).reason ?? 'it is not valid YAML';
    throw invalidInput(`Skill content has invalid frontmatter: ${reason}.`);
  }
  if (attributes === null || typeof attributes !== 'object' || Array.isArray(attributes)) {
    throw invalidInput('Skill content frontmatter must be a mapping with name and description.');
  }
  const meta = attributes as Record<string, unknown>;
  const field = (key: 'name' | 'description'): string | undefined => {
    const value = meta[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string') throw invalidInput(`Skill content frontmatter field ${key} must be a string.`);
    return value.trim() || undefined;
  };
  const instructions = body.trim();
  return { name: field('name') ?? nameFromHeading(instructions), description: field('description'), instructions };
}

/** The first markdown heading (`# Title`, any level), slugified: `Review Pull Requests` → `review-pull-requests`. */
function nameFromHeading(body: string): string | undefined {
  const heading = /^#{1,6}[ \t]+(.+?)[ \t#]*$/m.exec(body);
  if (heading?.[1] === undefined) return undefined;
  const slug = slugify(heading[1], { lower: true, strict: true, trim: true });
  return slug || undefined;
}
